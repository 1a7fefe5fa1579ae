import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../harness.js';
import { MemorySeries, minutes } from './fixture-series.js';

const T0 = Date.UTC(2026, 2, 2, 8, 0); // Monday 09:00 Paris
let h: Harness;
const series = new MemorySeries();
beforeAll(async () => {
  h = await harness(series);
  const office = h.a.rooms.find((r) => r.name === 'Open office')!;
  // 09:00–10:00 four people, 10:00–11:00 nobody, 11:00–12:00 ten people.
  series.setPresence(
    office.id,
    minutes(T0, 180, (i) => (i < 60 ? 4 : i < 120 ? 0 : 10)),
  );
  series.trafficOcc.set(
    office.id,
    minutes(T0, 60, () => 3),
  );
});
afterAll(async () => {
  await h.app.close();
});

const stats = (body: unknown) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v4/reporting/stats',
    headers: { authorization: `Bearer ${h.tokenA}` },
    payload: body as Record<string, unknown>,
  });

describe('stats API', () => {
  it('computes average, median and their occupied-only variants over local dates', async () => {
    const office = h.a.rooms.find((r) => r.name === 'Open office')!.id;
    const res = await stats({
      measurements: [
        'occupancy_avg_presence',
        'occupancy_median_presence',
        'occupancy_used_avg_presence',
        'occupancy_used_median_presence',
        'occupancy_avg_traffic',
      ],
      items: [office],
      start: '2026-03-02',
      stop: '2026-03-03',
    });
    expect(res.json()).toEqual({
      data: {
        [office]: {
          occupancy_avg_presence: 4.6667,
          occupancy_median_presence: 4,
          occupancy_used_avg_presence: 7,
          occupancy_used_median_presence: 7,
          occupancy_avg_traffic: 3,
        },
      },
    });
  });

  it('honours time ranges and excluded days', async () => {
    const office = h.a.rooms.find((r) => r.name === 'Open office')!.id;
    const morning = await stats({
      measurements: ['occupancy_avg_presence'],
      items: [office],
      start: '2026-03-02',
      stop: '2026-03-03',
      filters: { time_ranges: [{ start: '11:00', stop: '12:00' }] },
    });
    expect(morning.json()).toEqual({ data: { [office]: { occupancy_avg_presence: 10 } } });
    const noMonday = await stats({
      measurements: ['occupancy_avg_presence'],
      items: [office],
      start: '2026-03-02',
      stop: '2026-03-03',
      filters: { exclude_days_of_week: ['Monday'] },
    });
    expect(noMonday.json()).toEqual({ data: { [office]: { occupancy_avg_presence: null } } });
  });

  it('takes RFC 3339 timestamps for start and stop as published clients send them, and answers the published shape', async () => {
    const office = h.a.rooms.find((r) => r.name === 'Open office')!.id;
    // 10:00–11:00 Paris is 09:00–10:00 UTC: the empty hour, then 11:00–11:30 of ten people.
    const res = await stats({
      measurements: ['occupancy_avg_presence'],
      items: [office],
      start: '2026-03-02T09:00:00.000Z',
      stop: '2026-03-02T10:30:00.000Z',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { [office]: { occupancy_avg_presence: 3.3333 } } });
    const offset = await stats({
      measurements: ['occupancy_avg_presence'],
      items: [office],
      start: '2026-03-02T10:00:00+01:00',
      stop: '2026-03-02T11:00:00+01:00',
    });
    expect(offset.json()).toEqual({ data: { [office]: { occupancy_avg_presence: 0 } } });
  });

  it('refuses relative times, unknown measurements, and items of another organisation', async () => {
    const refused = await stats({
      measurements: ['occupancy_avg_presence'],
      items: [h.a.rooms[1]!.id],
      start: '-7d',
      stop: '2026-03-03',
    });
    expect(refused.statusCode).toBe(400);
    expect((refused.json() as { message: string }).message).toMatch(/relative times are not supported/);
    const office = h.a.rooms[1]!.id;
    expect(
      (await stats({ measurements: ['occupancy_avg_presence'], items: [office], start: 'now-7d', stop: '2026-03-03' }))
        .statusCode,
    ).toBe(400);
    expect(
      (
        await stats({
          measurements: ['occupancy_p95_presence'],
          items: [office],
          start: '2026-03-02',
          stop: '2026-03-03',
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (
        await stats({
          measurements: ['occupancy_avg_presence'],
          items: [h.b.rooms[0]!.id],
          start: '2026-03-02',
          stop: '2026-03-03',
        })
      ).statusCode,
    ).toBe(404);
  });

  it.each([
    ['a top-level key', { bogus: 1 }, /unknown key bogus \(known here: measurements, items/],
    ['a misspelt filters', { filter: { time_ranges: [] } }, /unknown key filter; did you mean `filters`\?/],
    ['a key of filters', { filters: { exclude_days: ['Monday'] } }, /unknown key filters\.exclude_days/],
    [
      'a key of a time range',
      { filters: { time_ranges: [{ start: '08:00', end: '09:00' }] } },
      /unknown key filters\.time_ranges\[0\]\.end/,
    ],
  ])('refuses %s with INVALID_REQUEST naming it (issue 27)', async (_name, extra, message) => {
    const res = await stats({
      measurements: ['occupancy_avg_presence'],
      items: [h.a.rooms[1]!.id],
      start: '2026-03-02',
      stop: '2026-03-03',
      ...extra,
    });
    expect(res.statusCode).toBe(400);
    const answer = res.json() as { code: string; message: string };
    expect(answer.code).toBe('INVALID_REQUEST');
    expect(answer.message).toMatch(message);
  });
});
