import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { sqliteStore, sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import type { Store } from '../../src/store/port.js';
import { PostgresWebhookStore } from '../../src/store/postgres-webhooks.js';
import type { AsyncWebhookStore } from '../../src/store/webhook-port.js';
import { systemClock } from '../../src/core/clock.js';
import { startPlatform } from '../../src/platform/platform.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { verify } from '../../src/webhooks/signing.js';
import { startTestReceiver } from '../webhooks/receiver-fixture.js';
import { postgresPerFile } from '../support/postgres-per-file.js';
import { cli } from './fixtures/run-cli.js';
import { parseStoreLocation } from '../../src/store/location.js';

/**
 * `occusim deadletters` and `occusim webhooks deadletters|replay` on any store (`--store
 * sqlite:FILE`, `--store postgres://…`, `--db FILE`), through the store ports; a replay onto the
 * store a served platform uses is delivered by that platform's engine.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const T = Date.UTC(2026, 2, 2, 7);
const { skip, createDatabase } = postgresPerFile();
const dir = mkdtempSync(join(tmpdir(), 'occusim-store-cmds-'));
const loaded = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
if (!loaded.ok) throw new Error('quickstart does not load');
const model = loaded.model;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Kind {
  name: string;
  skip: boolean;
  /** A new empty store: its `--store` value, and how the platform and the test open it. */
  create(): Promise<{ flag: string; dbPath: string; store(): Promise<Store>; webhooks(): Promise<AsyncWebhookStore> }>;
}

let files = 0;
const KINDS: Kind[] = [
  {
    name: 'SQLite',
    skip: false,
    create: () => {
      const path = join(dir, `store-${++files}.sqlite`);
      return Promise.resolve({
        flag: `sqlite:${path}`,
        dbPath: path,
        store: () => Promise.resolve(sqliteStore(path)),
        webhooks: () => Promise.resolve(sqliteWebhookStore(path)),
      });
    },
  },
  {
    name: 'PostgreSQL',
    skip: skip !== null,
    create: async () => {
      const url = await createDatabase();
      return {
        flag: url,
        dbPath: url,
        store: () => PostgresStore.open(url),
        webhooks: () => PostgresWebhookStore.open(url),
      };
    },
  },
];

for (const kind of KINDS) {
  describe.skipIf(kind.skip)(`store commands on ${kind.name}`, () => {
    it('occusim deadletters lists the cloud dead letters of the store, text and JSON', async () => {
      const at = await kind.create();
      const store = await at.store();
      await store.writeDeadLetter({
        receivedAtMs: T,
        topic: 'occusim/v1/hives/HV9/uplink',
        reason: 'UNKNOWN_HIVE',
        message: 'no hive with serial HV9',
        payload: new Uint8Array([2]),
      });
      await store.close();
      const r = await cli('deadletters', '--store', at.flag);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(
        /^2026-03-02T07:00:00.000Z\s+UNKNOWN_HIVE\s+occusim\/v1\/hives\/HV9\/uplink\s+no hive with serial HV9\n$/,
      );
      expect(r.err).toContain('1 dead letter(s) in');
      const json = await cli('deadletters', '--store', at.flag, '--json');
      expect((JSON.parse(json.out) as { deadLetters: unknown[] }).deadLetters).toEqual([
        {
          receivedAt: '2026-03-02T07:00:00.000Z',
          reason: 'UNKNOWN_HIVE',
          topic: 'occusim/v1/hives/HV9/uplink',
          message: 'no hive with serial HV9',
        },
      ]);
    }, 60_000);

    it('occusim webhooks replay puts dead letters and a time range back in the outbox, listed by webhooks deadletters before', async () => {
      const at = await kind.create();
      const hooks = await at.webhooks();
      await hooks.enqueue(
        ['a', 'b'].map((e, i) => ({
          subscriptionId: `webhook_${i + 1}`,
          eventId: `event_${e}`,
          eventType: 'TRAFFIC',
          eventTimestampMs: T + i,
          body: '{}',
          enqueuedAtMs: 1,
          nextAttemptMs: 1,
        })),
      );
      for (const sub of ['webhook_1', 'webhook_2']) {
        const [d] = await hooks.due(sub, 1, 1);
        await hooks.recordAttempts([{ id: d?.id ?? 0, result: 'dead', error: 'HTTP 410' }]);
      }
      await hooks.close();
      const listed = await cli('webhooks', 'deadletters', '--store', at.flag, '--subscription', 'webhook_1');
      expect(listed.out).toMatch(
        /^webhook_1 {2}event_a {2}TRAFFIC {2}2026-03-02T07:00:00.000Z {2}attempts 1 {2}"HTTP 410"\n$/,
      );
      const dead = await cli('webhooks', 'replay', '--store', at.flag, '--dead', '--subscription', 'webhook_1');
      expect(dead).toMatchObject({ code: 0, err: expect.stringContaining('1 delivery back in the outbox') as unknown });
      const range = await cli(
        'webhooks',
        'replay',
        '--store',
        at.flag,
        '--from',
        '2026-03-02T07:00:00.001Z',
        '--to',
        '2026-03-02T08:00:00Z',
      );
      expect(range).toMatchObject({
        code: 0,
        err: expect.stringContaining('1 delivery back in the outbox') as unknown,
      });
      const after = await at.webhooks();
      try {
        expect(await after.counts('webhook_1')).toEqual({ pending: 1, delivered: 0, dead: 0 });
        expect(await after.counts('webhook_2')).toEqual({ pending: 1, delivered: 0, dead: 0 });
      } finally {
        await after.close();
      }
    }, 60_000);

    it('a replay onto the store a served platform uses is delivered by that platform, once, signed', async () => {
      const at = await kind.create();
      const receiver = await startTestReceiver();
      const platform = await startPlatform(
        platformConfig({
          organisations: organisationsFromScenario(model),
          tickMs: model.tickMs,
          store: parseStoreLocation(at.dbPath),
          advanceEveryMs: 50,
          webhooks: {
            seed: 1,
            allow: ['127.0.0.1/8'],
            declared: [
              {
                orgId: model.org.id,
                input: { name: 'traffic', eventTypes: ['TRAFFIC'], url: receiver.url, secret: SECRET },
              },
            ],
          },
        }),
        { clock: systemClock },
      );
      try {
        const id = platform.webhooks?.service.all()[0]?.id as string;
        // A dead letter in the served store (as an endpoint that refused it would leave it), of
        // an event sensed now (delivered rows of old events are pruned at once).
        const hooks = await at.webhooks();
        await hooks.enqueue([
          {
            subscriptionId: id,
            eventId: 'event_replayed',
            eventType: 'TRAFFIC',
            eventTimestampMs: systemClock.now(),
            body: '{"id":"event_replayed"}',
            enqueuedAtMs: 1,
            nextAttemptMs: Number.MAX_SAFE_INTEGER,
          },
        ]);
        const [d] = await hooks.due(id, Number.MAX_SAFE_INTEGER, 1);
        await hooks.recordAttempts([{ id: d?.id ?? 0, result: 'dead', error: 'HTTP 410' }]);
        await hooks.close();
        expect(receiver.received).toHaveLength(0);
        const r = await cli('webhooks', 'replay', '--store', at.flag, '--dead');
        expect(r.code).toBe(0);
        const deadline = Date.now() + 10_000;
        while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
        await new Promise((res) => setTimeout(res, 300));
        expect(receiver.received.map((x) => x.body)).toEqual(['{"id":"event_replayed"}']);
        const got = receiver.received[0] as (typeof receiver.received)[number];
        expect(
          verify([SECRET], got.headers as Record<string, string>, got.body, Math.floor(Date.now() / 1000)),
        ).toEqual({ ok: true });
        const check = await at.webhooks();
        try {
          expect(await check.counts(id)).toEqual({ pending: 0, delivered: 1, dead: 0 });
        } finally {
          await check.close();
        }
      } finally {
        await platform.close();
        await receiver.close();
      }
    }, 60_000);
  });
}

describe('store commands refuse', () => {
  it('no store, a missing SQLite file, --store with --db, an unreachable PostgreSQL (named without its password)', async () => {
    expect(await cli('webhooks', 'replay', '--dead')).toMatchObject({
      code: 2,
      err: expect.stringContaining('needs --store') as unknown,
    });
    expect(await cli('webhooks', 'deadletters', '--store', 'sqlite:/nonexistent/s.sqlite')).toMatchObject({
      code: 2,
      err: expect.stringContaining('no store at /nonexistent/s.sqlite') as unknown,
    });
    expect(await cli('deadletters', '--store', 'sqlite:a.sqlite', '--db', 'a.sqlite')).toMatchObject({ code: 2 });
    expect(
      await cli(
        'webhooks',
        'replay',
        '--db',
        join(dir, 'none.sqlite'),
        '--from',
        'yesterday',
        '--to',
        '2026-03-02T08:00:00Z',
      ),
    ).toMatchObject({ code: 2, err: expect.stringContaining('--from must be an RFC 3339 instant') as unknown });
    const pg = await cli('deadletters', '--store', 'postgres://nobody:secret@127.0.0.1:1/occusim');
    expect(pg.code).not.toBe(0);
    expect(pg.err).toMatch(/cannot connect to the PostgreSQL store postgres:\/\/nobody@127\.0\.0\.1:1\/occusim/);
    expect(pg.err).not.toContain('secret');
    expect(pg.err).not.toMatch(/\n\s+at /);
  });
});
