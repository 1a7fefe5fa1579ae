import { describe, expect, it } from 'vitest';
import { LocalDays } from '../../src/cloud/local-day.js';
import { rawOccupancy, trafficSpaces, withCumulative } from '../../src/cloud/traffic-occupancy.js';
import { Bucketer } from '../../src/cloud/rollup.js';
import { ROOM_B, SENSOR_T, tinyModel } from './fixture.js';

const MIN = 60_000;

describe('traffic occupancy', () => {
  it('counts a room through all its doors, "in" being into the sensor’s room', () => {
    const spaces = trafficSpaces(tinyModel());
    expect(spaces.find((s) => s.spaceId === ROOM_B)?.terms).toEqual([{ sensorId: SENSOR_T.id, sign: 1 }]);
    expect(spaces.find((s) => s.spaceId === 'room_a')?.terms).toEqual([{ sensorId: SENSOR_T.id, sign: -1 }]);
    expect(spaces.some((s) => s.kind === 'floor')).toBe(false); // no entrance door in the fixture
  });

  it('resets at the first instant of the local day, 01:00 where midnight does not exist (America/Santiago)', () => {
    const days = new LocalDays('America/Santiago');
    const from = Date.UTC(2026, 8, 6, 2, 0); // 22:00 −04:00 on Saturday 5 September
    const rows = Array.from({ length: 240 }, (_, i) => ({
      sensorId: SENSOR_T.id,
      minuteMs: from + i * MIN,
      in: 1,
      out: 0,
    }));
    const series = rawOccupancy(
      { spaceId: ROOM_B, kind: 'room', terms: [{ sensorId: SENSOR_T.id, sign: 1 }] },
      new Map([[SENSOR_T.id, rows]]),
      days,
      from,
      from + 240 * MIN,
    );
    const reset = Date.UTC(2026, 8, 6, 4, 0); // 01:00 −03:00: the first instant of 6 September
    const i = series.findIndex((p) => p.minuteMs === reset);
    expect(series[i - 1]?.value).toBe(120);
    expect(series[i]?.value).toBe(1);
    const records = withCumulative(rows, days);
    expect(records[i]).toMatchObject({ inCsum: 1, outCsum: 0, deltaSum: 1, deltaCsum: 1 });
    expect(records[i - 1]).toMatchObject({ inCsum: 120, deltaCsum: 120 });
  });

  it('buckets hours and days in local time, half-hour offsets included', () => {
    const kolkata = new Bucketer(new LocalDays('Asia/Kolkata'));
    const t = Date.UTC(2026, 0, 10, 4, 45); // 10:15 IST
    expect(kolkata.bucketOf(t, '1h')).toEqual([Date.UTC(2026, 0, 10, 4, 30), Date.UTC(2026, 0, 10, 5, 30)]);
    expect(kolkata.bucketOf(t, '1d')).toEqual([Date.UTC(2026, 0, 9, 18, 30), Date.UTC(2026, 0, 10, 18, 30)]);
    expect(kolkata.bucketOf(t, '15m')).toEqual([Date.UTC(2026, 0, 10, 4, 45), Date.UTC(2026, 0, 10, 5, 0)]);
    const berlin = new Bucketer(new LocalDays('Europe/Berlin'));
    const [s, e] = berlin.bucketOf(Date.UTC(2026, 2, 29, 12), '1d');
    expect((e - s) / 3_600_000).toBe(23);
  });
});
