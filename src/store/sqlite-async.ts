import type { Store, StoreSync } from './port.js';
import { SqliteStore } from './sqlite-store.js';
import { SqliteWebhookStore } from './sqlite-webhooks.js';
import type { AsyncWebhookStore, WebhookStore } from './webhook-port.js';

/**
 * The SQLite store behind the asynchronous `Store` port. better-sqlite3 answers on the
 * caller's thread, so each operation runs at once and its promise is already settled: the
 * pipeline's awaits cost a microtask, not a round trip, and a failure rejects (never throws).
 */
const OPERATIONS = {
  hasBatch: true,
  ackedSeq: true,
  writeBatch: true,
  writeDeadLetter: true,
  forgetReceivedFrom: true,
  payloadsSensedIn: true,
  writePresenceMinutes: true,
  writeTrafficMinutes: true,
  writeMinutes: true,
  presenceMinutes: true,
  trafficMinutes: true,
  deadLetters: true,
  writeAssets: true,
  assets: true,
  writeEvents: true,
  events: true,
  eventCount: true,
  lastInstantCounts: true,
  refreshRollups: true,
  presenceSeries: true,
  trafficSeries: true,
  prune: true,
  writeHeartbeat: true,
  hiveStatus: true,
  sensorStatus: true,
  presenceColumns: true,
  hiveStatuses: true,
  sensorStatuses: true,
  getState: true,
  setState: true,
  markReopen: true,
  reopenMarks: true,
  clearReopenMarks: true,
  close: true,
} as const satisfies Record<keyof StoreSync, true>;

/**
 * Each of `names` on `sync` as an asynchronous operation: it runs at once on the caller's
 * thread and returns a settled promise (a throw becomes a rejection). Wrappers built once.
 */
function settledPort(sync: object, names: Iterable<string>): Record<string, (...args: unknown[]) => Promise<unknown>> {
  const port: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const name of names) {
    const op = ((sync as Record<string, unknown>)[name] as (...args: unknown[]) => unknown).bind(sync);
    port[name] = (...args) => {
      try {
        return Promise.resolve(op(...args));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    };
  }
  return port;
}

/** The port over a synchronous store (the SQLite file, or a test double of `StoreSync`). */
export function asyncStore(sync: StoreSync): Store {
  return settledPort(sync, Object.keys(OPERATIONS)) as unknown as Store;
}

/**
 * The SQLite webhook store at `path` (or that adapter, opened by the caller) behind the
 * asynchronous webhook port: the engine, the service and the commands on any store await it.
 * As `asyncStore`, each operation runs at once on the caller's thread and returns a settled
 * promise: one promise per call (a round, a fan-out chunk), never per row. The wrappers are
 * built once, here, for every method of the adapter (so an operation added to the port needs
 * no list here), not per call.
 */
export function sqliteWebhookStore(path: string | SqliteWebhookStore): AsyncWebhookStore {
  const sync = typeof path === 'string' ? new SqliteWebhookStore(path) : path;
  const methods = Object.getOwnPropertyNames(SqliteWebhookStore.prototype).filter(
    (name) => name !== 'constructor' && typeof sync[name as keyof WebhookStore] === 'function',
  );
  return settledPort(sync, methods) as unknown as AsyncWebhookStore;
}

/** The SQLite store at `path` (':memory:' for tests) behind the port; `sync` is the same file's direct access. */
export function sqliteStore(path: string | SqliteStore): Store & { readonly sync: SqliteStore } {
  const sync = typeof path === 'string' ? new SqliteStore(path) : path;
  return Object.assign(asyncStore(sync), { sync });
}
