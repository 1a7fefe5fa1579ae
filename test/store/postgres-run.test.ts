import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE } from '../../src/api/server.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { postgresPerFile } from '../support/postgres-per-file.js';

/**
 * End to end: the quickstart office run once on a SQLite file and once with `--store
 * postgres://…` on a real PostgreSQL: the same report result, and the same stored per-minute
 * series, rollups and event outbox, compared in a canonical order (ids in insertion order).
 */
const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
const { skip, createDatabase } = postgresPerFile();
const dir = mkdtempSync(join(tmpdir(), 'occusim-pg-run-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every stored row that a run's outcome consists of, in a canonical order. */
const CANONICAL: Record<string, string> = {
  presence: 'SELECT space_id, minute_ms, value, samples FROM presence_minute ORDER BY space_id, minute_ms',
  traffic: 'SELECT sensor_id, minute_ms, in_count, out_count FROM traffic_minute ORDER BY sensor_id, minute_ms',
  presenceRollup:
    'SELECT space_id, every, bucket_ms, value, minutes FROM presence_rollup ORDER BY space_id, every, bucket_ms',
  trafficRollup:
    'SELECT sensor_id, every, bucket_ms, in_count, out_count, minutes FROM traffic_rollup ORDER BY sensor_id, every, bucket_ms',
  events: 'SELECT id, event_id, type, space_id, minute_ms, value, revision, emitted_at_ms FROM events ORDER BY id',
  batches: 'SELECT hive_serial, seq, sent_at_ms, received_at_ms, packet_count FROM batches ORDER BY hive_serial, seq',
  progress: 'SELECT hive_serial, acked_seq FROM hive_progress ORDER BY hive_serial',
  state: "SELECT key, value FROM pipeline_state WHERE key != 'run_key' ORDER BY key",
};

// PostgreSQL sorts text by the database's collation; the helper's cluster is initialised with locale C, as SQLite compares bytes.
async function pgRows(url: string): Promise<Record<string, unknown[]>> {
  const client = new pg.Client({
    connectionString: url,
    types: {
      getTypeParser: (oid, format) => (oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)),
    },
  });
  await client.connect();
  try {
    const out: Record<string, unknown[]> = {};
    for (const [name, sql] of Object.entries(CANONICAL))
      out[name] = (await client.query(sql)).rows.map((r: Record<string, unknown>) => ({ ...r }));
    return out;
  } finally {
    await client.end();
  }
}

function sqliteRows(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  try {
    const out: Record<string, unknown[]> = {};
    for (const [name, sql] of Object.entries(CANONICAL))
      out[name] = db
        .prepare(sql)
        .all()
        .map((r) => ({ ...(r as Record<string, unknown>) }));
    return out;
  } finally {
    db.close();
  }
}

describe.skipIf(skip !== null)('a run on a PostgreSQL store', () => {
  it('stores the same series, rollups and outbox and reports the same result as on SQLite (quickstart, seed 7, 30 min)', async () => {
    const sqlitePath = join(dir, 'run.sqlite');
    const url = await createDatabase();
    const options = { seed: 7, durationMs: 30 * 60_000 };
    const onSqlite = await runScenario(QUICKSTART, { ...options, dbPath: sqlitePath });
    const onPostgres = await runScenario(QUICKSTART, { ...options, dbPath: url });
    expect(JSON.stringify(onPostgres.result)).toBe(JSON.stringify(onSqlite.result));
    expect(onPostgres.result.messages.lost).toBe(0);
    const expected = sqliteRows(sqlitePath);
    const actual = await pgRows(url);
    expect((expected.presence ?? []).length).toBeGreaterThan(100);
    expect((expected.events ?? []).length).toBeGreaterThan(100);
    for (const name of Object.keys(CANONICAL)) expect({ [name]: actual[name] }).toEqual({ [name]: expected[name] });
  });

  it('refuses a second run on the same database unless --fresh or --resume, as on SQLite', async () => {
    const url = await createDatabase();
    const options = { seed: 7, durationMs: 5 * 60_000, dbPath: url };
    await runScenario(QUICKSTART, options);
    await expect(runScenario(QUICKSTART, options)).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/already holds a run/) as unknown,
    });
    const fresh = await runScenario(QUICKSTART, { ...options, storePolicy: 'fresh' });
    expect(fresh.result.messages.duplicateBatches).toBe(0);
    expect(fresh.result.messages.lost).toBe(0);
  });

  it('resumes a run stopped at its --duration to what an uninterrupted run stores on SQLite, minute for minute', async () => {
    const url = await createDatabase();
    const whole = join(dir, 'whole.sqlite');
    const uninterrupted = await runScenario(QUICKSTART, { seed: 7, durationMs: 20 * 60_000, dbPath: whole });
    await runScenario(QUICKSTART, { seed: 7, durationMs: 10 * 60_000, dbPath: url });
    const resumed = await runScenario(QUICKSTART, {
      seed: 7,
      durationMs: 20 * 60_000,
      dbPath: url,
      storePolicy: 'resume',
    });
    expect(resumed.result.messages.lost).toBe(0);
    expect(resumed.result.messages.duplicateBatches).toBeGreaterThan(0);
    expect(resumed.result.messages.batchesProcessed + resumed.result.messages.duplicateBatches).toBe(
      uninterrupted.result.messages.batchesProcessed,
    );
    const expected = sqliteRows(whole);
    const actual = await pgRows(url);
    for (const name of ['presence', 'traffic', 'batches', 'progress'])
      expect({ [name]: actual[name] }).toEqual({ [name]: expected[name] });
  });

  it('serves its minutes and device status through the HTTP API, as stored (reporting and GraphQL)', async () => {
    const url = await createDatabase();
    const loaded = loadScenarioFile(QUICKSTART);
    if (!loaded.ok) throw new Error('quickstart does not load');
    const model = loaded.model;
    const office = model.rooms.find((r) => r.name === 'Open office');
    const client = model.clients[0];
    if (!office || !client) throw new Error('quickstart has an open office and a client');
    const stopMs = model.startMs + 40 * 60_000;
    let apiUrl = '';
    let served: { points: Array<[number, number]>; hives: Array<{ isOnline: boolean }> } | null = null;
    await runScenario(QUICKSTART, {
      durationMs: 40 * 60_000,
      dbPath: url,
      platformThread: false,
      api: { port: 0, audience: DEFAULT_AUDIENCE },
      onPlatform: (ready) => {
        apiUrl = ready.apiUrl ?? '';
      },
      beforeClose: async () => {
        const login = await fetch(`${apiUrl}/api/v2/clients/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_id: client.clientId,
            client_secret: client.secret,
            audience: DEFAULT_AUDIENCE,
            grant_type: 'client_credentials',
          }),
        });
        const token = ((await login.json()) as { access_token: string }).access_token;
        const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
        const report = await fetch(`${apiUrl}/api/v3/reporting`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            window: { every: '1m', function: 'max', timezone: 'Europe/Paris' },
            filter: {
              measurements: ['room_occupancy'],
              rooms: { eq: [office.id] },
              start: new Date(model.startMs).toISOString(),
              stop: new Date(stopMs).toISOString(),
            },
          }),
        });
        expect(report.status).toBe(200);
        const points = ((await report.json()) as { data: Array<{ start: string; value: number }> }).data.map(
          (p): [number, number] => [Date.parse(p.start), p.value],
        );
        const gql = await fetch(`${apiUrl}/api/v3/graphql`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ query: '{ hives { data { isOnline } } }' }),
        });
        served = {
          points,
          hives: ((await gql.json()) as { data: { hives: { data: Array<{ isOnline: boolean }> } } }).data.hives.data,
        };
      },
    });
    const stored = ((await pgRows(url)).presence ?? []) as Array<{
      space_id: string;
      minute_ms: number;
      value: number;
    }>;
    const expected = stored
      .filter((r) => r.space_id === office.id && r.minute_ms < stopMs)
      .map((r): [number, number] => [r.minute_ms, r.value]);
    const answer = served as { points: Array<[number, number]>; hives: Array<{ isOnline: boolean }> } | null;
    expect(expected.length).toBeGreaterThan(30);
    expect(answer?.points).toEqual(expected);
    expect(answer?.hives.length).toBeGreaterThan(0);
    expect(answer?.hives.every((h) => h.isOnline)).toBe(true);
  });
});
