import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AppError, ErrorCodes, type ErrorCode } from './errors.js';

/**
 * The request/response plumbing shared by the threads a run starts (the platform's, the hives'):
 * the worker started from `dist/` or from sources, its ready handshake, and calls answered by
 * id, every pending call failed at once when the thread dies. Requests are answered in the
 * order the thread handles them, which is what keeps a threaded run byte-identical.
 */

/** What a thread answers a call with. */
export type WorkerReply =
  { kind: 'result'; id: number; value: unknown } | { kind: 'error'; id: number; code: string | null; message: string };

/** What a thread sends once, when it has started or could not. */
export type WorkerStarted<R extends { kind: 'ready' }> = R | { kind: 'failed'; code: string | null; message: string };

/**
 * The compiled `<name>.js` beside `base` (from `dist/`), or `<name>.ts` with tsx's loader
 * registered inside the worker first (from sources: Vitest, tsx) — a .ts entry given directly
 * is refused before `--import` hooks apply.
 */
export function startModuleWorker(base: string, name: string, workerData: unknown): Worker {
  const js = new URL(`./${name}.js`, base);
  const ts = new URL(`./${name}.ts`, base);
  return existsSync(fileURLToPath(js))
    ? new Worker(js, { workerData })
    : new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(ts.href)}); });`, {
        eval: true,
        workerData,
      });
}

/** A coded error from a thread as an AppError; an uncoded one as `fallback` says. */
export function threadError(code: string | null, message: string, fallback: ErrorCode | null): Error {
  if (code !== null && code in ErrorCodes) return new AppError(code as ErrorCode, message);
  return fallback === null ? new Error(message) : new AppError(fallback, message);
}

export interface WorkerCalls<Req> {
  call<T>(request: Req): Promise<T>;
  /** Posted without an answer; nothing once the thread is dead. */
  post(message: unknown, transfer?: readonly ArrayBuffer[]): void;
  dead(): boolean;
}

/**
 * Waits for the thread's ready message (terminating it when it fails to start), then routes its
 * replies to the calls. `failure` names the thread's end in the error every later call gets.
 */
export async function workerCalls<Req extends object, R extends { kind: 'ready' }>(
  worker: Worker,
  o: { what: string; fallback: ErrorCode | null },
): Promise<{ calls: WorkerCalls<Req>; ready: R }> {
  const failure = (message: string, cause?: unknown): Error =>
    o.fallback === null
      ? new Error(message, cause === undefined ? undefined : { cause })
      : new AppError(o.fallback, message, cause === undefined ? undefined : { cause });
  const ready = await new Promise<R>((resolve, reject) => {
    worker.once('message', (m: WorkerStarted<R>) =>
      m.kind === 'ready' ? resolve(m) : reject(threadError(m.code, m.message, o.fallback)),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(failure(`${o.what} exited (${code}) before it started`)));
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let nextId = 1;
  let dead: Error | null = null;
  worker.on('message', (m: WorkerReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.kind === 'result') p.resolve(m.value);
    else p.reject(threadError(m.code, m.message, o.fallback));
  });
  const fail = (err: Error): void => {
    dead = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', (err) => fail(failure(`${o.what} failed: ${err.message}`, err)));
  worker.on('exit', (code) => fail(failure(`${o.what} exited (${code})`)));
  const calls: WorkerCalls<Req> = {
    call<T>(request: Req): Promise<T> {
      if (dead) return Promise.reject(dead);
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        worker.postMessage({ ...request, id });
      });
    },
    post(message, transfer) {
      if (!dead) worker.postMessage(message, transfer);
    },
    dead: () => dead !== null,
  };
  return { calls, ready };
}
