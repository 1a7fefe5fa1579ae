import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresWebhookStore } from '../../src/cloud/store/postgres-webhooks.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { EVENT_TYPES } from '../../src/webhooks/event-types.js';
import { startReceiver } from '../../src/webhooks/receiver.js';
import { postgresPerFile } from '../support/postgres-per-file.js';

/**
 * Webhooks from a platform whose store is PostgreSQL (subscriptions, delivery outbox, event
 * outbox there): the receiver gets byte for byte what it gets from a SQLite store, with 20 %
 * of attempts failing (retries on the platform clock).
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const { skip, createDatabase } = postgresPerFile();
const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-pg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(dbPath: string, name: string) {
  const loaded = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!loaded.ok) throw new Error('quickstart does not load');
  const model = loaded.model;
  const out = join(dir, `${name}.ndjson`);
  const receiver = await startReceiver({ port: 0, secrets: [SECRET], out, failRate: 0.2, seed: 3 });
  try {
    const report = await runScenario(model, {
      durationMs: 20 * 60_000,
      platformThread: false,
      dbPath,
      webhooks: {
        allow: ['127.0.0.1/8'],
        declared: EVENT_TYPES.map((t) => ({ orgId: model.org.id, input: { name: t.toLowerCase(), eventTypes: [t], url: receiver.url, secret: SECRET } })),
      },
    });
    await receiver.close();
    return { report, stats: receiver.stats(), ndjson: readFileSync(out, 'utf8') };
  } catch (err) {
    await receiver.close();
    throw err;
  }
}

describe.skipIf(skip !== null)('webhooks on a PostgreSQL store', () => {
  it('keeps send_on_value_change values across a reopen, written with the enqueue, dropped with their subscription', async () => {
    const url = await createDatabase();
    const a = await PostgresWebhookStore.open(url);
    await a.putSubscription({ id: 'webhook_1', orgId: 'org_1', body: '{}' });
    await a.enqueue([], { key: 'webhook_outbox_after', value: 3 }, [
      { subscriptionId: 'webhook_1', subject: 'ROOM_OCCUPANCY|room_1', value: '2' },
      { subscriptionId: 'webhook_2', subject: 'ROOM_OCCUPANCY|room_1', value: '5' },
    ]);
    await a.enqueue([], undefined, [{ subscriptionId: 'webhook_1', subject: 'ROOM_OCCUPANCY|room_1', value: '3' }]);
    await a.close();
    const b = await PostgresWebhookStore.open(url);
    try {
      expect(await b.lastValues()).toEqual([
        { subscriptionId: 'webhook_1', subject: 'ROOM_OCCUPANCY|room_1', value: '3' },
        { subscriptionId: 'webhook_2', subject: 'ROOM_OCCUPANCY|room_1', value: '5' },
      ]);
      expect(await b.cursor('webhook_outbox_after')).toBe(3);
      await b.deleteSubscription('webhook_1');
      expect((await b.lastValues()).map((v) => v.subscriptionId)).toEqual(['webhook_2']);
    } finally {
      await b.close();
    }
  }, 60_000);

  it('delivers byte-identical bodies to the same receiver as on SQLite, nothing lost, every signature valid', async () => {
    const onSqlite = await run(join(dir, 'store.sqlite'), 'sqlite');
    const onPostgres = await run(await createDatabase(), 'postgres');
    expect(onPostgres.stats.badSignatures).toBe(0);
    expect(onPostgres.stats.failed).toBeGreaterThan(0);
    expect(onPostgres.ndjson.length).toBeGreaterThan(1000);
    expect(onPostgres.ndjson).toBe(onSqlite.ndjson);
    expect(onPostgres.report.result.webhooks).toEqual(onSqlite.report.result.webhooks);
    expect(onPostgres.report.result.webhooks?.every((s) => s.pending === 0 && s.deadLettered === 0)).toBe(true);
  }, 300_000);
});
