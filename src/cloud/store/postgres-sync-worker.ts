import { workerData, type MessagePort } from 'node:worker_threads';
import { isAppError } from '../../core/errors.js';
import { PostgresStore } from './postgres-store.js';
import type { SyncReply, SyncRequest } from './postgres-sync-messages.js';

/**
 * The worker of `openPostgresStoreSync`: one `PostgresStore`, requests answered in order; each
 * answer is posted before the shared flag is raised, so the caller finds it when it wakes.
 */
const { url, flag: buffer, port } = workerData as { url: string; flag: SharedArrayBuffer; port: MessagePort };
const flag = new Int32Array(buffer);
let store: PostgresStore | null = null;
let queue: Promise<void> = Promise.resolve();

function answer(reply: SyncReply): void {
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

async function run(req: SyncRequest): Promise<unknown> {
  if (req.method === 'open') {
    store = await PostgresStore.open(url);
    return null;
  }
  if (!store) throw new Error('the store is not open');
  const op = store[req.method] as (...args: unknown[]) => Promise<unknown>;
  return op.apply(store, req.args);
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
