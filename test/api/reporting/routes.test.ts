import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../harness.js';
import { MemorySeries, minutes } from './fixture-series.js';

// Monday 09:00 in Paris, six days before the harness clock (2026-11-22 12:00 UTC): inside every retention.
const T0 = Date.UTC(2026, 10, 16, 8, 0);
let h: Harness;
const series = new MemorySeries();

beforeAll(async () => {
  h = await harness(series);
  const office = h.a.rooms.find((r) => r.name === 'Open office')!;
  series.setPresence(
    office.id,
    minutes(T0, 120, (i) => (i < 60 ? 5 : 8)),
  );
  const traffic = h.a.sensors.find((s) => s.mode === 'traffic')!;
  series.traffic.set(
    traffic.id,
    Array.from({ length: 120 }, (_, i) => ({
      minuteMs: T0 + i * 60_000,
      in: i % 10 === 0 ? 2 : 0,
      out: i % 20 === 0 ? 1 : 0,
    })),
  );
});
afterAll(async () => {
  await h.app.close();
});

const report = (body: unknown, token = h.tokenA) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v3/reporting',
    headers: { authorization: `Bearer ${token}` },
    payload: body as Record<string, unknown>,
  });
const iso = (ms: number): string => new Date(ms).toISOString();
const officeId = (): string => h.a.rooms.find((r) => r.name === 'Open office')!.id;

describe('reporting request validation (400 before any processing)', () => {
  const ok = () => ({
    window: { every: '1h', function: 'max', timezone: 'Europe/Paris' },
    filter: { measurements: ['room_occupancy'], start: iso(T0), stop: iso(T0 + 7_200_000) },
  });
  it.each([
    [
      'window.offset',
      (b: ReturnType<typeof ok>) => Object.assign(b.window, { offset: '5m' }),
      /offset is no longer supported/,
    ],
    [
      'an interval beyond its range',
      (b: ReturnType<typeof ok>) =>
        Object.assign(b.window, { every: '1m' }) && Object.assign(b.filter, { stop: iso(T0 + 3 * 86_400_000) }),
      /at most 2 day\(s\)/,
    ],
    [
      'an unknown interval',
      (b: ReturnType<typeof ok>) => Object.assign(b.window, { every: '2m' }),
      /window.every must be one of/,
    ],
    [
      'an unknown function',
      (b: ReturnType<typeof ok>) => Object.assign(b.window, { function: 'p95' }),
      /window.function/,
    ],
    ['an unknown time zone', (b: ReturnType<typeof ok>) => Object.assign(b.window, { timezone: 'Mars/Base' }), /IANA/],
    // Relative starts are accepted since issue 18 (platform-reference §3); a start that is no time at all is not.
    [
      'a start that is no time',
      (b: ReturnType<typeof ok>) => Object.assign(b.filter, { start: 'yesterday' }),
      /RFC 3339 timestamp or a relative time/,
    ],
    [
      'an interval of 7m, however spelled',
      (b: ReturnType<typeof ok>) => Object.assign(b.window, { every: '420s' }),
      /window.every must be one of/,
    ],
    [
      'calibrated on presence',
      (b: ReturnType<typeof ok>) => Object.assign(b.filter, { calibrated: true }),
      /only to traffic_floor_occupancy/,
    ],
    [
      'an unknown measurement',
      (b: ReturnType<typeof ok>) => Object.assign(b.filter, { measurements: ['co2'] }),
      /measurements\[0\]/,
    ],
  ])('refuses %s', async (_name, mutate, message) => {
    const body = ok();
    mutate(body);
    const res = await report(body);
    expect(res.statusCode).toBe(400);
    expect((res.json() as { message: string }).message).toMatch(message);
  });
});

describe('unknown keys in a reporting body (issue 27: a typo once answered the whole organisation)', () => {
  const ok = (): Record<string, Record<string, unknown>> => ({
    window: { every: '1h', function: 'max', timezone: 'UTC' },
    filter: { measurements: ['room_occupancy'], start: iso(T0), stop: iso(T0 + 7_200_000) },
  });
  it.each([
    [
      'filter.room',
      (b: ReturnType<typeof ok>) => Object.assign(b.filter!, { room: { eq: ['room_x'] } }),
      /unknown key filter\.room; did you mean `rooms`\?/,
    ],
    [
      'filter.clients',
      (b: ReturnType<typeof ok>) => Object.assign(b.filter!, { clients: { eq: ['x'] } }),
      /unknown key filter\.clients/,
    ],
    [
      'a top-level key',
      (b: ReturnType<typeof ok>) => Object.assign(b, { bogus: 1 }),
      /unknown key bogus \(known here: window, filter/,
    ],
    [
      'window.timzone',
      (b: ReturnType<typeof ok>) => Object.assign(b.window!, { timzone: 'UTC' }),
      /unknown key window\.timzone; did you mean `timezone`\?/,
    ],
    [
      'a key beside eq',
      (b: ReturnType<typeof ok>) => Object.assign(b.filter!, { rooms: { eq: [officeId()], neq: ['x'] } }),
      /unknown key filter\.rooms\.neq/,
    ],
    [
      'filter.value.gtee',
      (b: ReturnType<typeof ok>) => Object.assign(b.filter!, { value: { gtee: 1 } }),
      /unknown key filter\.value\.gtee; did you mean `gte`\?/,
    ],
    [
      'a key of a time range',
      (b: ReturnType<typeof ok>) =>
        Object.assign(b.filter!, {
          time_constraints: { time_ranges: [{ start: '08:00', stop: '09:00', end: '10:00' }] },
        }),
      /unknown key filter\.time_constraints\.time_ranges\[0\]\.end/,
    ],
    [
      'paginate.size',
      (b: ReturnType<typeof ok>) => Object.assign(b, { paginate: { page: 1, size: 10 } }),
      /unknown key paginate\.size/,
    ],
    [
      'group_by.orders',
      (b: ReturnType<typeof ok>) => Object.assign(b, { group_by: { orders: ['room_id'] } }),
      /unknown key group_by\.orders; did you mean `order`\?/,
    ],
  ])('refuses %s with INVALID_REQUEST naming it', async (_name, mutate, message) => {
    const body = ok();
    mutate(body);
    const res = await report(body);
    expect(res.statusCode).toBe(400);
    const answer = res.json() as { code: string; message: string };
    expect(answer.code).toBe('INVALID_REQUEST');
    expect(answer.message).toMatch(message);
  });
});

describe("data beyond its interval's retention (spec §8: older data only at coarser intervals)", () => {
  const DAY = 86_400_000;
  const body = (every: string, startMs: number, stopMs: number) => ({
    window: { every, function: 'max', timezone: 'UTC' },
    filter: { measurements: ['room_occupancy'], rooms: { eq: [officeId()] }, start: iso(startMs), stop: iso(stopMs) },
  });
  it('refuses minutes older than 7 days with 400 INVALID_REQUEST naming the coarser intervals that reach that far', async () => {
    const now = h.clock.now();
    const res = await report(body('1m', now - 8 * DAY, now - 8 * DAY + 3_600_000));
    expect(res.statusCode).toBe(400);
    const answer = res.json() as { code: string; message: string };
    expect(answer.code).toBe('INVALID_REQUEST');
    expect(answer.message).toMatch(
      /^window\.every=1m data is kept for 7 days, back to 2026-11-15T12:00:00\.000Z; filter\.start 2026-11-14T12:00:00\.000Z is 8\.00 days before/,
    );
    expect(answer.message).toMatch(
      /intervals that reach that far: 5m \(kept 31 days\), 15m \(kept 93 days\), 30m \(kept 186 days\), 1h \(kept 732 days\), 1d \(kept for ever\)/,
    );
  });

  it('names only the intervals that reach the start: 40 days back at 5m leaves 15m and coarser', async () => {
    const now = h.clock.now();
    const res = await report(body('5m', now - 40 * DAY, now - 39 * DAY));
    expect(res.statusCode).toBe(400);
    expect((res.json() as { message: string }).message).toMatch(
      /reach that far: 15m \(kept 93 days\), 30m .*, 1d \(kept for ever\)/,
    );
    const hourly = await report(body('1h', now - 800 * DAY, now - 799 * DAY));
    expect((hourly.json() as { message: string }).message).toMatch(
      /reach that far: 1d \(kept for ever\), with window\.function max$/,
    );
    expect((await report(body('1d', now - 800 * DAY, now - 799 * DAY))).statusCode).toBe(200);
  });

  it('answers a start exactly at the retention limit', async () => {
    const now = h.clock.now();
    expect((await report(body('1m', now - 7 * DAY, now - 7 * DAY + 3_600_000))).statusCode).toBe(200);
  });
});

describe('reporting computation', () => {
  it('aggregates per-minute occupancy with the window function in the requested zone', async () => {
    const res = await report({
      window: { every: '1h', function: 'max', timezone: 'Europe/Paris' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0),
        stop: iso(T0 + 7_200_000),
      },
    });
    const data = (res.json() as { data: Array<Record<string, unknown>> }).data;
    expect(data.map((p) => [p.time, p.value])).toEqual([
      ['2026-11-16T09:00:00+01:00', 5],
      ['2026-11-16T10:00:00+01:00', 8],
    ]);
    expect(data[0]).toMatchObject({
      field: 'value',
      measurement: 'room_occupancy',
      room_id: officeId(),
      room_name: 'Open office',
      space_name: 'Ground',
      timezone_offset: '+01:00',
    });
    expect(data[0]).not.toHaveProperty('room_custom_id');
  });

  it('aligns hourly windows to local hours in half-hour zones', async () => {
    const res = await report({
      window: { every: '1h', function: 'mean', timezone: 'Asia/Kolkata' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0),
        stop: iso(T0 + 7_200_000),
      },
    });
    const times = (res.json() as { data: Array<{ time: string }> }).data.map((p) => p.time);
    expect(times[0]).toBe('2026-11-16T13:00:00+05:30'); // 07:30 UTC: the window holding 08:00 UTC
  });

  it('fills empty windows when asked and filters by value', async () => {
    const body = {
      window: { every: '30m', function: 'max', timezone: 'UTC', create_empty: true, fill: { value: 0 } },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0 - 3_600_000),
        stop: iso(T0 + 3_600_000),
        value: { gte: 0 },
      },
    };
    const values = (await report(body)).json() as { data: Array<{ value: number }> };
    expect(values.data.map((p) => p.value)).toEqual([0, 0, 5, 5]);
    const gt = (await report({ ...body, filter: { ...body.filter, value: { gt: 0 } } })).json() as { data: unknown[] };
    expect(gt.data).toHaveLength(2);
  });

  it('keeps only windows inside time constraints', async () => {
    const res = await report({
      window: { every: '15m', function: 'max', timezone: 'Europe/Paris' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0),
        stop: iso(T0 + 7_200_000),
        time_constraints: { time_ranges: [{ start: '10:00', stop: '10:30' }] },
      },
    });
    expect((res.json() as { data: Array<{ time: string }> }).data.map((p) => p.time)).toEqual([
      '2026-11-16T10:00:00+01:00',
      '2026-11-16T10:15:00+01:00',
    ]);
    const monday = await report({
      window: { every: '1h', function: 'max', timezone: 'Europe/Paris' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0),
        stop: iso(T0 + 7_200_000),
        time_constraints: { exclude_days_of_week: ['Monday'] },
      },
    });
    expect((monday.json() as { data: unknown[] }).data).toEqual([]);
  });

  it('reports traffic in and out with cumulative fields', async () => {
    const res = await report({
      window: { every: '1h', function: 'sum', timezone: 'UTC' },
      filter: { measurements: ['traffic'], start: iso(T0), stop: iso(T0 + 7_200_000) },
    });
    const data = (res.json() as { data: Array<Record<string, unknown>> }).data.filter(
      (p) => p.sensor_id === h.a.sensors.find((s) => s.mode === 'traffic')!.id,
    );
    expect(data.map((p) => [p.field, p.value, p.in_csum, p.out_csum, p.delta_sum, p.delta_csum])).toEqual([
      ['in', 12, 12, 3, 9, 9],
      ['out', 3, 12, 3, 9, 9],
      ['in', 12, 24, 6, 9, 18],
      ['out', 3, 24, 6, 9, 18],
    ]);
    expect(data[0]).toHaveProperty('mac_address');
    expect(data[0]).toHaveProperty('hive_serial');
  });

  it('groups by room and time, with statistics or raw points', async () => {
    const body = {
      window: { every: '30m', function: 'max', timezone: 'UTC' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0),
        stop: iso(T0 + 3_600_000),
      },
    };
    const stats = (await report({ ...body, group_by: { order: ['room_id', 'time'] } })).json() as {
      data: Record<string, Record<string, Record<string, number>>>;
    };
    expect(Object.values(stats.data[officeId()]!)[0]).toEqual({
      sum: 5,
      min: 5,
      max: 5,
      count: 1,
      mean: 5,
      median: 5,
      stddev: 0,
      first: 5,
      last: 5,
    });
    const raw = (await report({ ...body, group_by: { order: ['room_id', 'time'], raw: true } })).json() as {
      data: Record<string, Record<string, unknown[]>>;
    };
    expect(Object.values(raw.data[officeId()]!)[0]).toHaveLength(1);
  });

  it('pages and writes CSV', async () => {
    const body = {
      window: { every: '5m', function: 'max', timezone: 'UTC' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0),
        stop: iso(T0 + 7_200_000),
      },
    };
    const paged = (await report({ ...body, paginate: { page: 2, limit: 10 } })).json() as {
      data: unknown[];
      page_info: unknown;
    };
    expect(paged.page_info).toEqual({ page: 2, page_item_count: 10, total_item_count: 24, total_pages: 3 });
    const csv = await report({ ...body, options: { format: 'csv' } });
    expect(csv.headers['content-type']).toMatch(/text\/csv/);
    const lines = csv.body.trim().split('\r\n');
    expect(lines).toHaveLength(25);
    expect(lines[0]).toMatch(/^field,measurement,time,start,stop,timezone_offset,/);
  });

  it("treats another organisation's ids as ids that do not exist", async () => {
    const theirs = await report({
      window: { every: '1h' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [h.b.rooms[0]!.id] },
        start: iso(T0),
        stop: iso(T0 + 3_600_000),
      },
    });
    const none = await report({
      window: { every: '1h' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: ['room_0000000000000000'] },
        start: iso(T0),
        stop: iso(T0 + 3_600_000),
      },
    });
    expect(theirs.statusCode).toBe(404);
    expect(none.statusCode).toBe(404);
    expect((theirs.json() as { message: string }).message.replace(h.b.rooms[0]!.id, 'X')).toBe(
      (none.json() as { message: string }).message.replace('room_0000000000000000', 'X'),
    );
  });
});

describe("the reporting request forms of the reference platform's clients", () => {
  const live = (filter: Record<string, unknown>, window: Record<string, unknown> = {}) => ({
    window: { every: '60s', function: 'max', timezone: 'UTC', create_empty: true, ...window },
    filter: { measurements: ['room_occupancy'], rooms: { eq: [officeId()] }, ...filter },
  });
  const starts = async (body: unknown): Promise<number[]> => {
    const res = await report(body);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: Array<{ start: string }> }).data.map((p) => Date.parse(p.start));
  };

  it('reads a relative start and an omitted stop against the platform clock: -5m is the last five minutes', async () => {
    const now = Math.floor(h.clock.now() / 60_000) * 60_000;
    expect(await starts(live({ start: '-5m' }))).toEqual([5, 4, 3, 2, 1].map((k) => now - k * 60_000));
    expect(await starts(live({ start: 'now-5m', stop: 'now' }))).toEqual(await starts(live({ start: '-5m' })));
    expect(await starts(live({ start: iso(now - 300_000), stop: iso(now) }))).toEqual(
      await starts(live({ start: '-5m' })),
    );
  });

  it('accepts every spelling of an allowed interval and nothing else', async () => {
    expect(await starts(live({ start: '-2h' }, { every: '60m' }))).toEqual(
      await starts(live({ start: '-2h' }, { every: '1h' })),
    );
    expect(await starts(live({ start: '-10m' }, { every: '300s' }))).toEqual(
      await starts(live({ start: '-10m' }, { every: '5m' })),
    );
    const refused = await report(live({ start: '-1h' }, { every: '7m' }));
    expect(refused.statusCode).toBe(400);
  });

  it('keys group_by.raw without an order by the ids filtered on, and flat points carry every metadata field', async () => {
    const body = {
      window: { every: '30m', function: 'max', timezone: 'UTC' },
      filter: {
        measurements: ['room_occupancy'],
        rooms: { eq: [officeId()] },
        start: iso(T0),
        stop: iso(T0 + 3_600_000),
      },
    };
    const raw = (await report({ ...body, group_by: { raw: true } })).json() as {
      data: Record<string, Record<string, Array<Record<string, unknown>>>>;
    };
    expect(Object.keys(raw.data)).toEqual([officeId()]);
    const point = Object.values(raw.data[officeId()]!)[0]![0]!;
    expect(Object.keys(point)).toEqual(
      expect.arrayContaining(['zone_id', 'zone_name', 'sensor_id', 'hive_id', 'hive_serial', 'mac_address', 'tag_id']),
    );
    expect(point.zone_id).toBeNull();
  });

  it('takes calibration points in either spelling, with their type', async () => {
    const body = (points: Record<string, unknown>) => ({
      window: { every: '1h', function: 'max', timezone: 'UTC' },
      filter: {
        measurements: ['traffic_room_occupancy'],
        start: iso(T0),
        stop: iso(T0 + 3_600_000),
        calibrated: 'true',
      },
      ...points,
    });
    const point = [{ timestamp: iso(T0), occupancy: 2, type: 'manual' }];
    expect((await report(body({ calibration_points: point }))).statusCode).toBe(200);
    expect((await report(body({ calibrationPoints: point }))).statusCode).toBe(200);
  });
});
