import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { columnsOf, type MinuteColumns } from '../../../src/api/reporting/columns.js';
import { computeRuns } from '../../../src/api/reporting/point-columns.js';
import { csvChunks, jsonChunks } from '../../../src/api/reporting/report-text.js';
import { computePoints } from '../../../src/api/reporting/report.js';
import {
  FUNCTIONS,
  MEASUREMENTS,
  parseReportingRequest,
  type ReportingQuery,
} from '../../../src/api/reporting/request.js';
import { paginate, toCsv } from '../../../src/api/reporting/shape.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import type { ScenarioModel } from '../../../src/scenario/model.js';
import { MemorySeries } from './fixture-series.js';

/** The fixture store, also reading columns natively (as storeSeries does with a file). */
class ColumnSeries extends MemorySeries {
  async presenceColumns(id: string, start: number, stop: number): Promise<MinuteColumns> {
    return columnsOf(await this.presenceMinutes(id, start, stop));
  }
}

function load(name: string): ScenarioModel {
  const r = loadScenarioFile(new URL(`../../../scenarios/${name}`, import.meta.url).pathname);
  if (!r.ok) throw new Error(`${name} does not load`);
  return r.model;
}

const MIN = 60_000;
// A Paris DST day, with minutes from the evening before to the day after.
const ANCHOR = Date.UTC(2026, 2, 28, 20);
const model = load('quickstart.yaml');
const assets = catalogueFromScenario(model);
const series = new ColumnSeries();
const plain = new MemorySeries();
// Deterministic data with gaps (empty windows), fractions (rounding) and zeros.
const value = (s: number, i: number): number => ((i * 7 + s * 3) % 11) / ((s % 3) + 1) + (i % 5 === 0 ? 0.1 : 0);
const spaces = [...model.floors, ...model.rooms, ...model.zones];
for (const [s, space] of spaces.entries()) {
  const rows = Array.from({ length: 1800 }, (_, i) => ({ minuteMs: ANCHOR + i * MIN, value: value(s, i) })).filter(
    (_, i) => (i + s) % 13 !== 0 && (i < 400 || i > 430),
  );
  series.setPresence(space.id, rows);
  plain.setPresence(space.id, rows);
  series.trafficOcc.set(
    space.id,
    rows.map((r) => ({ ...r, value: r.value - 2 })),
  );
  plain.trafficOcc.set(
    space.id,
    rows.map((r) => ({ ...r, value: r.value - 2 })),
  );
}
for (const [s, sensor] of model.sensors.filter((x) => x.mode === 'traffic').entries()) {
  const rows = Array.from({ length: 1800 }, (_, i) => ({
    minuteMs: ANCHOR + i * MIN,
    in: (i + s) % 4,
    out: (i * 3 + s) % 5,
  })).filter((_, i) => i % 17 !== 3);
  series.traffic.set(sensor.id, rows);
  plain.traffic.set(sensor.id, rows);
}

const hhmm = (m: number): string => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

// Filters that each leave few points: present in a quarter of the queries, so most reports are large.
const rarely = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: a, weight: 1 });

const body = fc.record({
  every: fc.constantFrom('1m', '5m', '15m', '30m', '1h', '1d'),
  fn: fc.option(fc.constantFrom(...FUNCTIONS), { nil: undefined }),
  timezone: fc.constantFrom('UTC', 'Europe/Paris', 'Asia/Kolkata', 'America/St_Johns'),
  createEmpty: fc.boolean(),
  fill: fc.constantFrom(undefined, { use_previous: true }, { value: 0 }, { value: -1.5 }),
  measurements: fc.shuffledSubarray([...MEASUREMENTS], { minLength: 1, maxLength: 3 }),
  startMin: fc.integer({ min: 0, max: 600 }),
  spanMin: fc.integer({ min: 1, max: 1100 }),
  value: rarely(fc.constantFrom<{ gte?: number; lt?: number; gt?: number }>({ gte: 2 }, { lt: 3, gt: 0.5 })),
  rooms: rarely(
    fc.subarray(
      model.rooms.map((r) => r.id),
      { minLength: 1 },
    ),
  ),
  ranges: rarely(fc.tuple(fc.integer({ min: 0, max: 1380 }), fc.integer({ min: 60, max: 900 }))),
  excludeSunday: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
  page: rarely(fc.record({ page: fc.integer({ min: 1, max: 3 }), limit: fc.integer({ min: 1, max: 200 }) })),
  format: fc.constantFrom('json', 'csv'),
});

function request(b: typeof body extends fc.Arbitrary<infer T> ? T : never): ReportingQuery {
  const start = ANCHOR + b.startMin * MIN;
  return parseReportingRequest({
    window: { every: b.every, function: b.fn, timezone: b.timezone, create_empty: b.createEmpty, fill: b.fill },
    filter: {
      measurements: b.measurements,
      start: new Date(start).toISOString(),
      stop: new Date(start + b.spanMin * MIN).toISOString(),
      value: b.value,
      ...(b.rooms ? { rooms: { eq: b.rooms } } : {}),
      time_constraints: {
        time_ranges: b.ranges
          ? [{ start: hhmm(b.ranges[0]), stop: hhmm(Math.min(1440, b.ranges[0] + b.ranges[1])) }]
          : [],
        exclude_days_of_week: b.excludeSunday ? ['Sunday'] : [],
      },
    },
    ...(b.page ? { paginate: b.page } : {}),
    options: { format: b.format },
  });
}

/** Today's general path: point objects, `paginate`, then `JSON.stringify` or `toCsv`. */
async function objectPath(q: ReportingQuery): Promise<string> {
  const { items, pageInfo } = paginate(await computePoints(assets, plain, model.org.id, q), q.page);
  if (q.format === 'csv') return toCsv(items);
  return JSON.stringify(pageInfo ? { data: items, page_info: pageInfo } : { data: items });
}

async function fastPath(q: ReportingQuery): Promise<string> {
  const rep = await computeRuns(assets, series, model.org.id, q);
  return q.format === 'csv'
    ? [...csvChunks(rep, q.page)].join('')
    : Buffer.concat([...jsonChunks(rep, q.page)]).toString();
}

describe('the reporting fast path', () => {
  it('writes byte for byte the text of the object path for random queries (fast-check seed 42)', async () => {
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const q = request(b);
        const expected = await objectPath(q);
        if ((expected.match(/\{"field"|\r\n/g) ?? []).length > 5) nonEmpty++;
        expect(await fastPath(q)).toBe(expected);
      }),
      { seed: 42, numRuns: 200 },
    );
    expect(nonEmpty).toBeGreaterThan(80); // the property compared real reports, not empty ones
  });

  it('writes the empty report as the object path does, in JSON and CSV', async () => {
    const q = request({
      every: '1h',
      fn: 'max',
      timezone: 'UTC',
      createEmpty: false,
      fill: undefined,
      measurements: ['room_occupancy'],
      startMin: 0,
      spanMin: 60,
      value: { gte: 1000 },
      rooms: undefined,
      ranges: undefined,
      excludeSunday: false,
      page: { page: 3, limit: 5 },
      format: 'json',
    });
    expect(await fastPath(q)).toBe(await objectPath(q));
    expect(await fastPath({ ...q, format: 'csv' })).toBe('\r\n');
  });

  it('splits a large report into chunks of about a megabyte', async () => {
    const q = request({
      every: '1m',
      fn: 'max',
      timezone: 'Europe/Paris',
      createEmpty: true,
      fill: undefined,
      measurements: ['room_occupancy', 'zone_occupancy'],
      startMin: 0,
      spanMin: 900,
      value: undefined,
      rooms: undefined,
      ranges: undefined,
      excludeSunday: false,
      page: undefined,
      format: 'json',
    });
    const chunks = [...jsonChunks(await computeRuns(assets, series, model.org.id, q), null)];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.slice(0, -1).every((c) => c.length > (1 << 20) - 4096 && c.length <= 1 << 20)).toBe(true);
    expect(Buffer.concat(chunks).toString()).toBe(await objectPath(q));
  });
});
