import { ErrorCodes } from '../core/errors.js';
import { startModuleWorker, workerCalls } from '../core/worker-calls.js';
import type { LiveTruth, Platform } from './platform.js';
import type { PlatformReads } from './reads.js';
import type { PlatformLivePost, PlatformRequest, PlatformThreadReady } from './thread-messages.js';
import type { PlatformConfig } from './config.js';

/**
 * The platform in its own worker thread, behind the same `Platform` interface as the
 * in-thread one: the simulator keeps the main thread (and its core), the platform — broker,
 * ingest, pipeline, store, API — takes the other. Requests are answered in order, so a run
 * drives it exactly as it drives an in-thread platform and gets byte-identical results.
 * From `dist/` the worker is the compiled `worker.js`; from sources (Vitest, tsx) `worker.ts`
 * with tsx registered in the worker.
 */
type Request = PlatformRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export async function startPlatformThread(config: PlatformConfig): Promise<Platform> {
  const worker = startModuleWorker(import.meta.url, 'worker', config);
  const { calls, ready: info } = await workerCalls<Request, PlatformThreadReady>(worker, {
    what: 'platform thread',
    fallback: ErrorCodes.CLOUD_FAILED,
  });
  const call = <T>(r: Request): Promise<T> => calls.call<T>(r);
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
  let knownTime = config.startMs;
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
    ...(info.live
      ? {
          publishLive: (truth: LiveTruth): void => {
            if (!closed) calls.post({ op: 'publishLive', truth } satisfies PlatformLivePost);
          },
        }
      : {}),
    restartBroker: info.canRestartBroker ? (filters) => call({ op: 'restartBroker', filters: [...filters] }) : null,
    async close() {
      if (closed) return;
      closed = true;
      if (!calls.dead()) await call({ op: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}
