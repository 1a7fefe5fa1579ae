import { describe, expect, it } from 'vitest';
import { batteryDates, batteryPercent } from '../../../src/api/graphql/battery.js';
import type { SensorStatus } from '../../../src/store/port.js';

const DAY = 86_400_000;
const status = (
  batteryLevel: number | null,
  batteryRuntimeS: number | null,
  healthAtMs: number | null = 100 * DAY,
): SensorStatus => ({
  sensorId: 's',
  lastSeenMs: healthAtMs ?? 0,
  healthAtMs,
  batteryLevel,
  batteryRuntimeS,
  rssiDbm: null,
  linkPdr: null,
  uptimeMs: null,
  parent: null,
  hops: null,
  queueOverflows: null,
});

describe('battery dates from the battery model', () => {
  it('a battery at half charge after 100 days was changed 100 days ago, is due in 80 days and empty in 100', () => {
    // Drain 0.5 per 100 days: runtime left 100 days.
    const d = batteryDates(status(0.5, (100 * DAY) / 1000, 100 * DAY));
    expect(d.powerType).toBe('battery');
    expect(d.lastChangeMs).toBe(0);
    expect(d.nextChangeMs).toBe(180 * DAY);
    expect(d.changeByMs).toBe(200 * DAY);
    expect(d.totalRuntimeDays).toBe(200);
  });

  it('a wired sensor and a sensor never heard have no dates; a wired one says so', () => {
    expect(batteryDates(status(1, 0))).toMatchObject({
      powerType: 'wired',
      lastChangeMs: null,
      nextChangeMs: null,
      changeByMs: null,
    });
    expect(batteryDates(null)).toMatchObject({
      powerType: 'battery',
      lastChangeMs: null,
      nextChangeMs: null,
      changeByMs: null,
      totalRuntimeDays: null,
    });
  });

  it('reads the level in percent, two decimals; wired and never heard have none', () => {
    expect(batteryPercent(status(0.99973, 1000))).toBe(99.97);
    expect(batteryPercent(status(0.5, 1000))).toBe(50);
    expect(batteryPercent(status(0, 0))).toBe(0);
    expect(batteryPercent(status(1, 0))).toBeNull();
    expect(batteryPercent(status(null, null))).toBeNull();
    expect(batteryPercent(null)).toBeNull();
  });

  it('an empty battery is due at once', () => {
    expect(batteryDates(status(0, 0, 5 * DAY))).toMatchObject({ nextChangeMs: 5 * DAY, changeByMs: 5 * DAY });
  });
});
