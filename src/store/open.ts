import type { Store } from './port.js';
import type { ApiStatePort } from './api-state-port.js';
import { PostgresApiState } from './postgres-api-state.js';
import { PostgresLeases } from './postgres-leases.js';
import type { Fence } from './postgres-session.js';
import { POSTGRES_TABLES } from './postgres-schema.js';
import { PostgresStore } from './postgres-store.js';
import { PostgresWebhookStore } from './postgres-webhooks.js';
import { SqliteApiState } from './sqlite-api-state.js';
import { sqliteStore, sqliteWebhookStore } from './sqlite-async.js';
import type { AsyncWebhookStore } from './webhook-port.js';
import { removeSqliteFiles, type GuardedStore } from './guard.js';
import { locationText as where, type StoreLocation } from './location.js';

/**
 * The one place that turns a store location into adapters: the rest of the product holds the
 * ports only (`Store`, `AsyncWebhookStore`, `ApiStatePort`, the leases). Each open is its own
 * connection (a SQLite handle, a PostgreSQL session), so a reader never queues behind a writer.
 */
const ADAPTERS = {
  sqlite: {
    store: (path: string): Promise<Store> => Promise.resolve(sqliteStore(path)),
    webhooks: (path: string): Promise<AsyncWebhookStore> => Promise.resolve(sqliteWebhookStore(path)),
    apiState: (path: string): Promise<ApiStatePort> => Promise.resolve(new SqliteApiState(path)),
    leases: null,
    clear: (path: string): Promise<void> => Promise.resolve(removeSqliteFiles(path)),
  },
  postgres: {
    store: (url: string): Promise<Store> => PostgresStore.open(url),
    webhooks: (url: string): Promise<AsyncWebhookStore> => PostgresWebhookStore.open(url),
    apiState: (url: string): Promise<ApiStatePort> => PostgresApiState.open(url),
    leases: (url: string): LeasedStore => ({
      openLeases: () => PostgresLeases.open(url),
      openFenced: (fence) => PostgresStore.open(url, { fence }),
    }),
    clear: async (url: string): Promise<void> => {
      // Opening creates the schema on a new database; then its rows go.
      const db = await PostgresStore.migratedSession(url);
      try {
        await db.query(`TRUNCATE ${POSTGRES_TABLES.join(', ')} RESTART IDENTITY`);
      } finally {
        await db.close();
      }
    },
  },
} as const;

/** The occupancy store at `location` (series, batches, dead letters, pipeline state). */
export function openStore(location: StoreLocation): Promise<Store> {
  return ADAPTERS[location.kind].store(where(location));
}

/** The webhook subscriptions and delivery outbox at `location`, behind the asynchronous webhook port. */
export function openWebhookStore(location: StoreLocation): Promise<AsyncWebhookStore> {
  return ADAPTERS[location.kind].webhooks(where(location));
}

/** What the HTTP API keeps across restarts (clients, asset overlays) at `location`. */
export function openApiState(location: StoreLocation): Promise<ApiStatePort> {
  return ADAPTERS[location.kind].apiState(where(location));
}

/**
 * Partition leases and fenced writes (docs/scale-out.md, Failover), where the store can share
 * them between processes: a PostgreSQL database. Null for a SQLite file, one process's own.
 */
export interface LeasedStore {
  openLeases(): Promise<PostgresLeases>;
  /** A store whose writes are refused once `fence`'s token is no longer the partition's. */
  openFenced(fence: Fence): Promise<Store>;
}

export function leasedStore(location: StoreLocation): LeasedStore | null {
  const leases = ADAPTERS[location.kind].leases;
  return leases === null ? null : leases(where(location));
}

/** The store at `location` as the run guard sees it (`--fresh` empties it, `--resume` reads it). */
export function guardedStore(location: StoreLocation): GuardedStore {
  return {
    location,
    open: () => openStore(location),
    clear: () => ADAPTERS[location.kind].clear(where(location)),
  };
}
