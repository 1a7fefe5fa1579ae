import type { Store } from '../cloud/store/port.js';
import { PostgresStore } from '../cloud/store/postgres-store.js';
import { sqliteStore, sqliteWebhookStore } from '../cloud/store/sqlite-async.js';
import { PostgresWebhookStore } from '../cloud/store/postgres-webhooks.js';
import type { AsyncWebhookStore } from '../cloud/store/webhook-port.js';
import { PostgresSession } from '../cloud/store/postgres-session.js';
import { POSTGRES_TABLES } from '../cloud/store/postgres-schema.js';
import { removeSqliteFiles, type GuardedStore } from './store-guard.js';
import type { StoreLocation } from './store-location.js';

/**
 * The one place that turns a store location into an adapter of the `Store` port: the rest of
 * the platform holds the port only.
 */
export function openStore(location: StoreLocation): Promise<Store> {
  return location.kind === 'sqlite' ? Promise.resolve(sqliteStore(location.path)) : PostgresStore.open(location.url);
}

/** The webhook subscriptions and delivery outbox at `location`, behind the asynchronous webhook port. */
export function openWebhookStore(location: StoreLocation): Promise<AsyncWebhookStore> {
  return location.kind === 'sqlite'
    ? Promise.resolve(sqliteWebhookStore(location.path))
    : PostgresWebhookStore.open(location.url);
}

/** The store at `location` as the run guard sees it (`--fresh` empties it, `--resume` reads it). */
export function guardedStore(location: StoreLocation): GuardedStore {
  return {
    location,
    open: () => openStore(location),
    async clear() {
      if (location.kind === 'sqlite') return removeSqliteFiles(location.path);
      // Opening creates the schema on a new database; then its rows go.
      await (await PostgresStore.open(location.url)).close();
      const db = await PostgresSession.connect(location.url);
      try {
        await db.query(`TRUNCATE ${POSTGRES_TABLES.join(', ')} RESTART IDENTITY`);
      } finally {
        await db.close();
      }
    },
  };
}
