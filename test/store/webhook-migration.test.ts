import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-schema.js';
import { PostgresWebhookStore } from '../../src/store/postgres-webhooks.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import type { AsyncWebhookStore, Delivery } from '../../src/store/webhook-port.js';
import { postgresPerFile } from '../support/postgres-per-file.js';
import { delivery } from './webhook-store-contract.js';

/**
 * A store written before the body table (SQLite migration 7, PostgreSQL 3) keeps every delivery
 * through the migration: state, attempts, body byte for byte, the same ids; afterwards the
 * repeat check, due order and deletes work on the migrated rows.
 */
const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Rows as the old schema held them: pending, delivered, dead, one with a retry waiting.
const OLD_ROWS = [
  ['webhook_1', 'event_b', 20, 'pending', 0, 1000, null, null],
  ['webhook_1', 'event_a', 10, 'delivered', 1, 1000, null, 1100],
  ['webhook_1', 'event_c', 30, 'dead', 9, 1000, 'HTTP 404', null],
  ['webhook_2', 'event_a', 10, 'pending', 2, 4000, 'HTTP 500', null],
] as const;
const OLD_COLUMNS =
  'subscription_id, event_id, event_ts_ms, state, attempts, next_attempt_ms, last_error, delivered_at_ms, event_type, body, enqueued_at_ms';
const bodyOf = (sub: string, eventId: string): string => `{"id":"${eventId}","to":"${sub}","é":"ü"}`;

async function expectMigrated(s: AsyncWebhookStore): Promise<void> {
  const one = await s.deliveries('webhook_1');
  expect(
    one.map((d: Delivery) => [d.id, d.eventId, d.state, d.attempts, d.lastError, d.deliveredAtMs, d.body]),
  ).toEqual([
    [1, 'event_b', 'pending', 0, null, null, bodyOf('webhook_1', 'event_b')],
    [2, 'event_a', 'delivered', 1, null, 1100, bodyOf('webhook_1', 'event_a')],
    [3, 'event_c', 'dead', 9, 'HTTP 404', null, bodyOf('webhook_1', 'event_c')],
  ]);
  expect((await s.due('webhook_2', 5000, 10)).map((d) => [d.id, d.eventId, d.attempts, d.body])).toEqual([
    [4, 'event_a', 2, bodyOf('webhook_2', 'event_a')],
  ]);
  // A repeat of a migrated row is still skipped; a new row takes an id after theirs (PostgreSQL's
  // identity also spends one on the skipped repeat).
  await s.enqueue([delivery('event_b', 20), delivery('event_d', 40)]);
  const after = await s.deliveries('webhook_1');
  expect(after.map((d) => d.eventId)).toEqual(['event_b', 'event_a', 'event_c', 'event_d']);
  expect(after[0]?.body).toBe(bodyOf('webhook_1', 'event_b'));
  expect(after[3]?.id).toBeGreaterThan(4);
  expect(await s.pruneDelivered(15)).toBe(1);
  expect(await s.deleteSubscription('webhook_2')).toBe(false); // not a stored subscription, but its undelivered rows go
  expect(await s.deliveries('webhook_2')).toEqual([]);
}

describe('webhook outbox migration to the body table', () => {
  it('SQLite: a store at migration 6 migrates with its deliveries intact', async () => {
    const path = join(dir, 'old.db');
    const db = new Database(path);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
    for (const m of MIGRATIONS.filter((x) => x.version <= 6)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(m.version);
    }
    const insert = db.prepare(
      `INSERT INTO webhook_deliveries (${OLD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'ROOM_OCCUPANCY', ?, 1000)`,
    );
    for (const r of OLD_ROWS) insert.run(...r, bodyOf(r[0], r[1]));
    db.close();
    const sync = new SqliteWebhookStore(path);
    const s = Object.fromEntries(
      ['deliveries', 'due', 'enqueue', 'pruneDelivered', 'deleteSubscription'].map((k) => [
        k,
        async (...a: unknown[]) => (sync as unknown as Record<string, (...x: unknown[]) => unknown>)[k]?.(...a),
      ]),
    );
    try {
      await expectMigrated(s as unknown as AsyncWebhookStore);
      const check = new Database(path, { readonly: true });
      // No body outlives its delivery (the trigger), and the old event-time index is gone.
      expect(
        check
          .prepare(
            'SELECT COUNT(*) AS n FROM webhook_delivery_bodies WHERE id NOT IN (SELECT id FROM webhook_deliveries)',
          )
          .get(),
      ).toEqual({ n: 0 });
      expect(
        check
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'webhook_deliveries' AND sql IS NOT NULL ORDER BY name",
          )
          .all(),
      ).toEqual([{ name: 'webhook_deliveries_due' }]);
      check.close();
    } finally {
      sync.close();
    }
  });

  const { skip, createDatabase } = postgresPerFile();
  it.skipIf(skip !== null)(
    `PostgreSQL: a database at migration 2 migrates with its deliveries intact${skip ? ` (skipped: ${skip})` : ''}`,
    async () => {
      const url = await createDatabase();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('CREATE TABLE schema_version (version INTEGER NOT NULL)');
        for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version <= 2)) {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_version (version) VALUES ($1)', [m.version]);
        }
        for (const r of OLD_ROWS)
          await client.query(
            `INSERT INTO webhook_deliveries (${OLD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'ROOM_OCCUPANCY', $9, 1000)`,
            [...r, bodyOf(r[0], r[1])],
          );
      } finally {
        await client.end();
      }
      const s = await PostgresWebhookStore.open(url);
      try {
        await expectMigrated(s);
      } finally {
        await s.close();
      }
    },
  );
});
