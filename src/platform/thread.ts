import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AppError, ErrorCodes, type ErrorCode } from '../core/errors.js';
import type { LiveTruth, Platform } from './platform.js';
import type { PlatformReads } from './reads.js';
import type { PlatformLivePost, PlatformRequest, PlatformResponse, PlatformThreadFailed, PlatformThreadInit, PlatformThreadReady } from './thread-messages.js';

/**
 * The platform in its own worker thread, behind the same `Platform` interface as the
 * in-thread one: the simulator keeps the main thread (and its core), the platform — broker,
 * ingest, pipeline, store, API — takes the other. Requests are answered in order, so a run
 * drives it exactly as it drives an in-thread platform and gets byte-identical results.
 * From `dist/` the worker is the compiled `worker.js`; from sources (Vitest, tsx) `worker.ts`
 * with tsx registered in the worker.
 */
type Request = PlatformRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export async function startPlatformThread(init: PlatformThreadInit): Promise<Platform> {
  const js = new URL('./worker.js', import.meta.url);
  const ts = new URL('./worker.ts', import.meta.url);
  const useJs = existsSync(fileURLToPath(js));
  // From sources, tsx's loader is registered inside the worker before the entry is imported
  // (a .ts entry given directly is refused before `--import` hooks apply).
  const worker = useJs
    ? new Worker(js, { workerData: init })
    : new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(ts.href)}); });`, { eval: true, workerData: init });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let nextId = 1;
  let dead: Error | null = null;
  const ready = new Promise<PlatformThreadReady>((resolve, reject) => {
    worker.once('message', (m: PlatformThreadReady | PlatformThreadFailed) => {
      if (m.kind === 'ready') resolve(m);
      else reject(toError(m.code, m.message));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new AppError(ErrorCodes.CLOUD_FAILED, `platform thread exited (${code}) before it started`)));
  });
  const info = await ready.catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  worker.on('message', (m: PlatformResponse) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.kind === 'result') p.resolve(m.value);
    else p.reject(toError(m.code, m.message));
  });
  const fail = (err: Error): void => {
    dead = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', (err) => fail(new AppError(ErrorCodes.CLOUD_FAILED, `platform thread failed: ${err.message}`, { cause: err })));
  worker.on('exit', (code) => fail(new AppError(ErrorCodes.CLOUD_FAILED, `platform thread exited (${code})`)));
  const call = <T>(r: Request): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...r, id } as PlatformRequest);
    });
  };
  const reads: PlatformReads = {
    counters: () => call({ op: 'counters' }),
    presenceMinutes: (key) => call({ op: 'presenceMinutes', key }),
    trafficMinutes: (key) => call({ op: 'trafficMinutes', key }),
    deadLetters: () => call({ op: 'deadLetters' }),
    webhookStats: () => call({ op: 'webhookStats' }),
    eventEnvelopes: (afterId, limit) => call({ op: 'eventEnvelopes', afterId, limit }),
    report: (request) => call({ op: 'report', request }),
  };
  let closed = false;
  let knownTime = init.startMs;
  return {
    brokerUrl: info.brokerUrl,
    apiUrl: info.apiUrl,
    dbPath: info.dbPath,
    inOwnThread: true,
    reads,
    // The platform's clock as last set: a setTime that would not move it needs no round trip.
    setTime: (t) => {
      if (t <= knownTime) return Promise.resolve();
      knownTime = t;
      return call({ op: 'setTime', t });
    },
    advanceTo: (t, next) => {
      knownTime = Math.max(knownTime, t, next ?? -Infinity);
      return call({ op: 'advanceTo', t, next: next ?? null });
    },
    finish: () => call({ op: 'finish' }),
    stoppedAt: (t) => call({ op: 'stoppedAt', t }),
    // Posted as it comes (the hub in the platform's thread coalesces for the browsers).
    ...(info.live ? { publishLive: (truth: LiveTruth): void => {
            if (!dead && !closed) worker.postMessage({ op: 'publishLive', truth } satisfies PlatformLivePost);
          },
        } : {}),
    restartBroker: info.canRestartBroker ? (filters) => call({ op: 'restartBroker', filters: [...filters] }) : null,
    async close() {
      if (closed) return;
      closed = true;
      if (!dead) await call({ op: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

function toError(code: string | null, message: string): Error {
  return code !== null && code in ErrorCodes ? new AppError(code as ErrorCode, message) : new AppError(ErrorCodes.CLOUD_FAILED, message);
}
