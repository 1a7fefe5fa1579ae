import { workerData, type MessagePort } from 'node:worker_threads';
import { isAppError } from '../../core/errors.js';
import { PostgresStore } from './postgres-store.js';
import type { SyncKind, SyncReply, SyncRequest } from './postgres-sync-messages.js';
import { PostgresWebhookStore } from './postgres-webhooks.js';

/**
 * The worker of `openPostgresSync`: one `PostgresStore` or `PostgresWebhookStore`, requests answered in order; each
 * answer is posted before the shared flag is raised, so the caller finds it when it wakes.
 */
const { url, kind, flag: buffer, port } = workerData as { url: string; kind: SyncKind; flag: SharedArrayBuffer; port: MessagePort };
const flag = new Int32Array(buffer);
let store: Record<string, unknown> | null = null;
let queue: Promise<void> = Promise.resolve();

function answer(reply: SyncReply): void {
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

async function run(req: SyncRequest): Promise<unknown> {
  if (req.method === 'open') {
    store = (kind === 'store' ? await PostgresStore.open(url) : await PostgresWebhookStore.open(url)) as unknown as Record<string, unknown>;
    return null;
  }
  const op = store?.[req.method];
  if (typeof op !== 'function') throw new Error(`no operation ${req.method}`);
  return (op as (...args: unknown[]) => Promise<unknown>).apply(store, req.args);
}

port.on('message', (req: SyncRequest) => {
  queue = queue.then(async () => {
    try {
      answer({ ok: true, value: await run(req) });
    } catch (err) {
      answer({ ok: false, code: isAppError(err) ? err.code : 'STORE_FAILED', message: (err as Error).message });
    }
  });
});
