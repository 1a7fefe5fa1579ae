import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { AppError, ErrorCodes, type ErrorCode } from '../../core/errors.js';
import type { StoreSync } from './port.js';
import type { SyncKind, SyncReply, SyncRequest } from './postgres-sync-messages.js';
import type { WebhookStore } from './webhook-port.js';

/**
 * The PostgreSQL store answering synchronously, for code written against `StoreSync` or
 * `WebhookStore`, which better-sqlite3 answers on the caller's thread. Its only user left is
 * the webhook engine (src/webhooks/platform-hooks.ts: subscriptions, delivery outbox and the
 * event outbox it fans out); the HTTP API's reporting, status, stats and MCP reads go through
 * the asynchronous `Store` port. Remove this bridge, its worker and its messages when the
 * webhook engine moves to asynchronous ports: each call blocks the thread (`Atomics.wait`). A worker thread holds the connection
 * (`PostgresStore` or `PostgresWebhookStore`); a call posts the request and blocks
 * on a shared flag until the worker's answer is in the port (`Atomics.wait`, then
 * `receiveMessageOnPort`): the same blocking model as better-sqlite3, one round trip per call.
 * The pipeline and the HTTP API never use this: they await the asynchronous `PostgresStore`.
 */
const TIMEOUT_MS = 30_000;

function startWorker(workerData: { url: string; kind: SyncKind; flag: SharedArrayBuffer; port: MessagePort }): Worker {
  const js = new URL('./postgres-sync-worker.js', import.meta.url);
  const ts = new URL('./postgres-sync-worker.ts', import.meta.url);
  const options = { workerData, transferList: [workerData.port] };
  // From sources (Vitest, tsx) tsx is registered inside the worker first, as src/platform/thread.ts does.
  return existsSync(fileURLToPath(js))
    ? new Worker(js, options)
    : new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(ts.href)}); });`, { ...options, eval: true });
}

export function openPostgresSync(url: string, kind: 'store'): StoreSync;
export function openPostgresSync(url: string, kind: 'webhooks'): WebhookStore;
export function openPostgresSync(url: string, kind: SyncKind): StoreSync | WebhookStore {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = startWorker({ url, kind, flag: flag.buffer as SharedArrayBuffer, port: port2 });
  worker.unref();
  let closed = false;
  const call = (method: string, args: unknown[]): unknown => {
    if (closed) throw new AppError(ErrorCodes.STORE_FAILED, `PostgreSQL store: ${method} after close`);
    Atomics.store(flag, 0, 0);
    port1.postMessage({ method, args } satisfies SyncRequest);
    if (Atomics.wait(flag, 0, 0, TIMEOUT_MS) === 'timed-out') throw new AppError(ErrorCodes.STORE_FAILED, `PostgreSQL store: ${method} did not answer within ${TIMEOUT_MS / 1000} s`);
    const reply = receiveMessageOnPort(port1)?.message as SyncReply | undefined;
    if (!reply) throw new AppError(ErrorCodes.STORE_FAILED, `PostgreSQL store: no answer to ${method}`);
    if (!reply.ok) throw new AppError(reply.code as ErrorCode, reply.message);
    return reply.value;
  };
  // Opening (connect, migrate) is the first call: a bad URL fails here, with the adapter's message.
  call('open', []);
  const store = new Proxy({} as StoreSync & WebhookStore, {
    get(_target, name) {
      if (name === 'close') {
        return (): void => {
          if (closed) return;
          call('close', []);
          closed = true;
          port1.close();
          void worker.terminate();
        };
      }
      if (typeof name !== 'string' || name === 'then') return undefined;
      return (...args: unknown[]) => call(name, args);
    },
  });
  return store;
}
