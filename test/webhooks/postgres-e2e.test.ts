import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { eventId } from '../../src/cloud/events.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { PostgresWebhookStore } from '../../src/store/postgres-webhooks.js';
import { systemClock } from '../../src/core/clock.js';
import { startPlatform } from '../../src/platform/platform.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { verify } from '../../src/webhooks/signing.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { EVENT_TYPES } from '../../src/webhooks/event-types.js';
import { startReceiver } from '../../src/webhooks/receiver.js';
import { postgresPerFile } from '../support/postgres-per-file.js';
import { linesPerType } from './per-subscription.js';
import { startTestReceiver } from './receiver-fixture.js';

/**
 * Webhooks from a platform whose store is PostgreSQL (subscriptions, delivery outbox, event
 * outbox there): each subscription's receiver gets byte for byte what it gets from a SQLite store, with 20 %
 * of attempts failing (retries on the platform clock).
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const { skip, createDatabase } = postgresPerFile();
const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-pg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function quickstart(): ScenarioModel {
  const loaded = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!loaded.ok) throw new Error('quickstart does not load');
  return loaded.model;
}

async function run(dbPath: string, name: string) {
  const model = quickstart();
  const out = join(dir, `${name}.ndjson`);
  const receiver = await startReceiver({ port: 0, secrets: [SECRET], out, failRate: 0.2, seed: 3 });
  try {
    const report = await runScenario(model, {
      durationMs: 20 * 60_000,
      platformThread: false,
      dbPath,
      webhooks: {
        allow: ['127.0.0.1/8'],
        declared: EVENT_TYPES.map((t) => ({
          orgId: model.org.id,
          input: { name: t.toLowerCase(), eventTypes: [t], url: receiver.url, secret: SECRET },
        })),
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

  it('delivers each subscription byte-identical bodies to the same receiver as on SQLite, nothing lost, every signature valid', async () => {
    const onSqlite = await run(join(dir, 'store.sqlite'), 'sqlite');
    const onPostgres = await run(await createDatabase(), 'postgres');
    expect(onPostgres.stats.badSignatures).toBe(0);
    expect(onPostgres.stats.failed).toBeGreaterThan(0);
    expect(onPostgres.ndjson.length).toBeGreaterThan(1000);
    // Each subscription's sequence, byte for byte (their interleaving at the shared receiver is the wall clock's).
    expect(linesPerType(onPostgres.ndjson)).toEqual(linesPerType(onSqlite.ndjson));
    expect(onPostgres.ndjson.length).toBe(onSqlite.ndjson.length);
    expect(onPostgres.report.result.webhooks).toEqual(onSqlite.report.result.webhooks);
    expect(onPostgres.report.result.webhooks?.every((s) => s.pending === 0 && s.deadLettered === 0)).toBe(true);
  }, 300_000);

  it('a served platform delivers a GraphQL subscription, and answers its API while the engine waits on a locked table', async () => {
    const url = await createDatabase();
    const model = quickstart();
    const AUDIENCE = 'https://api.occusim.test';
    const receiver = await startTestReceiver();
    const platform = await startPlatform(
      platformConfig({
        organisations: organisationsFromScenario(model),
        tickMs: model.tickMs,
        store: { kind: 'postgres', url },
        api: { port: 0, audience: AUDIENCE },
        advanceEveryMs: 50,
        webhooks: { seed: 1, allow: ['127.0.0.1/8'] },
      }),
      { clock: systemClock },
    );
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      const client = model.clients[0] as ScenarioModel['clients'][number];
      const login = await fetch(`${platform.apiUrl}/api/v2/clients/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.secret,
          audience: AUDIENCE,
        }),
      });
      const token = ((await login.json()) as { access_token: string }).access_token;
      const gql = async (
        query: string,
        variables: Record<string, unknown> = {},
      ): Promise<{ data: Record<string, unknown> }> => {
        const res = await fetch(`${platform.apiUrl}/api/v3/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query, variables }),
        });
        return (await res.json()) as { data: Record<string, unknown> };
      };
      const created = await gql(
        'mutation($u: String!) { createWebhooks(input: [{ name: "live", eventTypes: ["ROOM_OCCUPANCY"], endpointConfig: { url: $u } }]) { id secret } }',
        { u: receiver.url },
      );
      const secret = (created.data.createWebhooks as Array<{ secret: string }>)[0]?.secret as string;
      // The delivery outbox locked by another session: the engine's next fan-out waits on it.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE');
      const room = model.rooms[0]?.id as string;
      const t = systemClock.now();
      const writer = await PostgresStore.open(url);
      await writer.writeEvents([
        {
          eventId: eventId('ROOM_OCCUPANCY', room, t, 0),
          type: 'ROOM_OCCUPANCY',
          spaceId: room,
          minuteMs: t,
          value: 3,
          revision: 0,
          emittedAtMs: t,
        },
      ]);
      await writer.close();
      const waiting = async (): Promise<boolean> =>
        (
          await locker.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          )
        ).rows[0]?.n !== '0';
      const deadline = systemClock.now() + 10_000;
      while (!(await waiting()) && systemClock.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(await waiting()).toBe(true);
      // The platform's thread is free while its query waits (the blocking bridge held it in Atomics.wait).
      const listed = await gql('{ webhooks { id name } }');
      expect(listed.data.webhooks).toEqual([{ id: expect.stringMatching(/^webhook_/) as unknown, name: 'live' }]);
      expect(await waiting()).toBe(true);
      expect(receiver.received).toHaveLength(0);
      await locker.query('COMMIT');
      const until = systemClock.now() + 10_000;
      while (receiver.received.length === 0 && systemClock.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(receiver.received).toHaveLength(1);
      const got = receiver.received[0] as (typeof receiver.received)[number];
      expect(JSON.parse(got.body)).toMatchObject({ type: 'ROOM_OCCUPANCY', data: 3, metadata: { room_id: room } });
      expect(
        verify([secret], got.headers as Record<string, string>, got.body, Math.floor(systemClock.now() / 1000)),
      ).toEqual({ ok: true });
    } finally {
      await locker.end();
      await platform.close();
      await receiver.close();
    }
  }, 60_000);
});
