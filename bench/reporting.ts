/**
 * Reporting section: the reporting API (Fastify inject → validation → store → windows →
 * points JSON) against DuckDB answering the same question from the same per-minute rows
 * in-process. Both clocks stop when the answer is complete: the API's at the last byte of
 * the response body, DuckDB's when its rows are materialised in JS. Two questions: 1 day × 1m × 1,000 rooms, and 60 days × 1d (10 rooms).
 * DuckDB gets a fixed +1 h offset for local days (no DST handling, no time-zone extension
 * offline): a simplification in its favour.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../src/api/app.js';
import { catalogueFromScenario } from '../src/assets/from-scenario.js';
import { AccountService } from '../src/api/auth/accounts.js';
import { ALL_SCOPES } from '../src/api/auth/scopes.js';
import { TokenService } from '../src/api/auth/tokens.js';
import { storeSeries } from '../src/api/reporting/store-series.js';
import { sqliteStore } from '../src/store/sqlite-async.js';
import { VirtualClock } from '../src/core/clock.js';
import { loadScenarioObject } from '../src/scenario/load.js';

const MIN = 60_000;
const DAY = 86_400_000;
const DAY0 = Date.UTC(2026, 0, 4, 23); // local midnight in Paris (winter)

function scenario(rooms: number): object {
  const cols = 40;
  return {
    version: 1,
    name: 'reporting-bench',
    start: '2026-01-05T00:00',
    duration: '1h',
    fidelity: 'model',
    organization: { name: 'Bench' },
    sites: [
      {
        name: 'S',
        timezone: 'Europe/Paris',
        buildings: [
          {
            name: 'B',
            floors: [
              {
                name: 'F',
                level: 0,
                rooms: Array.from({ length: rooms }, (_, i) => {
                  const x = (i % cols) * 3;
                  const y = Math.floor(i / cols) * 3;
                  return {
                    name: `R${i}`,
                    polygon: [
                      [x, y],
                      [x + 3, y],
                      [x + 3, y + 3],
                      [x, y + 3],
                    ],
                  };
                }),
              },
            ],
          },
        ],
      },
    ],
  };
}

/** The complete response body, read from the stream (inject would also decode it to a string). */
async function request(app: FastifyInstance, token: string, payload: object): Promise<Buffer> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v3/reporting',
    headers: { authorization: `Bearer ${token}` },
    payload,
    payloadAsStream: true,
  });
  const chunks: Buffer[] = [];
  for await (const c of res.stream()) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  if (res.statusCode !== 200) throw new Error(body.toString().slice(0, 300));
  return body;
}

interface Sample {
  wall: number;
  cpu: number;
}

/** Wall time and CPU time of all the process's threads (the machine is shared: CPU is steadier). */
async function timed<T>(f: () => Promise<T>): Promise<Sample & { value: T }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { value, wall, cpu: (c.user + c.system) / 1000 };
}

/**
 * Points in a JSON reporting body, counted on the bytes: the 1m question's body (~520 MB) is
 * near V8's string limit (0x1fffffe8), so it is not decoded. Each point has one `measurement` key.
 */
function countPoints(body: Buffer): number {
  const key = Buffer.from('"measurement":');
  let n = 0;
  for (let i = body.indexOf(key); i !== -1; i = body.indexOf(key, i + key.length)) n++;
  return n;
}

const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;

export async function runReportingBench(): Promise<void> {
  const loaded = loadScenarioObject(scenario(1000));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics.slice(0, 3)));
  const model = loaded.model;
  const dbPath = join(mkdtempSync(join(tmpdir(), 'occusim-rep-')), 'r.sqlite');
  // The API's connection, as the platform opens it: the asynchronous port over the SQLite file.
  const store = sqliteStore(dbPath);
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  await duck.run('CREATE TABLE m (space_id VARCHAR, minute_ms BIGINT, value DOUBLE)');
  const appender = await duck.createAppender('m');
  const add = (spaceId: string, minuteMs: number, value: number): void => {
    appender.appendVarchar(spaceId);
    appender.appendBigInt(BigInt(minuteMs));
    appender.appendDouble(value);
    appender.endRow();
  };
  // Day question: 1,000 rooms × 1,440 minutes. Long question: 10 rooms × 60 days.
  for (const [r, room] of model.rooms.entries()) {
    const days = r < 10 ? 60 : 1;
    const rows = Array.from({ length: days * 1440 }, (_, m) => ({
      spaceId: room.id,
      minuteMs: DAY0 + m * MIN,
      value: (m * 7 + r) % 13,
      samples: 60,
    }));
    store.sync.writePresenceMinutes(rows);
    for (const row of rows) add(row.spaceId, row.minuteMs, row.value);
  }
  appender.closeSync();
  // The pipeline keeps 1d rollups (max per local day) up to date; do the same here.
  store.sync.refreshRollups(
    model.rooms.slice(0, 10).flatMap((room) =>
      Array.from({ length: 60 }, (_, d) => ({
        spaceId: room.id,
        level: '1d' as const,
        startMs: DAY0 + d * DAY,
        endMs: DAY0 + (d + 1) * DAY,
      })),
    ),
  );

  const series = storeSeries(store, catalogueFromScenario(model));
  const clock = new VirtualClock(DAY0);
  const tokens = await TokenService.create({ issuer: 'b', audience: 'b', accessTtlS: 3600, refreshTtlS: 3600, clock });
  const app = await buildApi({
    assets: catalogueFromScenario(model),
    accounts: await AccountService.fromCatalogue(catalogueFromScenario(), clock, { N: 1024, r: 8, p: 1 }),
    tokens,
    clock,
    series,
  });
  const token = (
    await tokens.issueAccess({
      sub: 'b',
      orgId: model.org.id,
      clientId: 'b',
      scopes: new Set(ALL_SCOPES),
      kind: 'client',
      operator: false,
    })
  ).token;
  const ten = model.rooms.slice(0, 10).map((r) => r.id);
  const questions = [
    {
      name: '1 day × 1m × 1,000 rooms',
      body: {
        window: { every: '1m', function: 'max', timezone: 'Europe/Paris' },
        filter: {
          measurements: ['room_occupancy'],
          start: new Date(DAY0).toISOString(),
          stop: new Date(DAY0 + DAY).toISOString(),
        },
      },
      sql: `SELECT space_id, minute_ms, max(value) AS v FROM m WHERE minute_ms >= ${DAY0} AND minute_ms < ${DAY0 + DAY} GROUP BY space_id, minute_ms ORDER BY space_id, minute_ms`,
    },
    {
      name: '60 days × 1d × 10 rooms',
      body: {
        window: { every: '1d', function: 'max', timezone: 'Europe/Paris' },
        filter: {
          measurements: ['room_occupancy'],
          rooms: { eq: ten },
          start: new Date(DAY0).toISOString(),
          stop: new Date(DAY0 + 60 * DAY).toISOString(),
        },
      },
      sql: `SELECT space_id, (minute_ms + 3600000) // 86400000 AS d, max(value) AS v FROM m WHERE space_id IN (${ten.map((id) => `'${id}'`).join(',')}) AND minute_ms >= ${DAY0} AND minute_ms < ${DAY0 + 60 * DAY} GROUP BY 1, 2 ORDER BY 1, 2`,
    },
  ];
  console.log(
    '== reporting: API vs DuckDB on the same per-minute rows (p50 / p99 of 4 runs after a warm-up; wall, and CPU of all threads)',
  );
  for (const q of questions) {
    const api: Sample[] = [];
    const db: Sample[] = [];
    let points = 0;
    let rows = 0;
    let first: Buffer | null = null;
    for (let i = 0; i < 5; i++) {
      const a = await timed(() => request(app, token, q.body));
      // Checked after the clock stops: parsed once, then every body must be the same bytes.
      if (first === null) {
        first = a.value;
        points = countPoints(first);
      } else if (!a.value.equals(first)) throw new Error('the reporting API answered differently to the same request');
      const d = await timed(async () => (await duck.runAndReadAll(q.sql)).getRows().length);
      rows = d.value;
      if (i > 0) {
        api.push(a);
        db.push(d);
      }
    }
    const line = (xs: Sample[], k: 'wall' | 'cpu'): string =>
      `p50 ${pct(
        xs.map((x) => x[k]),
        50,
      )
        .toFixed(0)
        .padStart(6)} ms  p99 ${pct(
        xs.map((x) => x[k]),
        99,
      )
        .toFixed(0)
        .padStart(6)} ms`;
    const ratio = (k: 'wall' | 'cpu'): string =>
      (
        pct(
          api.map((x) => x[k]),
          50,
        ) /
        pct(
          db.map((x) => x[k]),
          50,
        )
      ).toFixed(2);
    console.log(
      `  ${q.name}: ${points.toLocaleString('en-US')} points, ${(first?.length ?? 0).toLocaleString('en-US')} bytes (DuckDB ${rows.toLocaleString('en-US')} rows)`,
    );
    console.log(`    DuckDB (baseline)   wall ${line(db, 'wall')}   cpu ${line(db, 'cpu')}`);
    console.log(
      `    reporting API       wall ${line(api, 'wall')}   cpu ${line(api, 'cpu')}   ratio ${ratio('wall')}× DuckDB (wall), ${ratio('cpu')}× (cpu)`,
    );
  }
  await app.close();
  await store.close();
}
