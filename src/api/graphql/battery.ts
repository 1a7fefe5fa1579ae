import type { SensorStatus } from '../../store/port.js';

/**
 * A sensor's battery dates from its newest health report (the cloud keeps the battery level
 * and the runtime left at the average drain so far: `SensorStatus`). The mesh's battery
 * model drains at a steady average rate d = level / runtime per second (docs/protocol.md
 * §Battery), so, with L the level and R the runtime at the report's instant t:
 *
 * - last change: when the level was 1, t − R·(1 − L)/L;
 * - next change: when the level reaches the change threshold (10 %), t + R·(L − 0.1)/L;
 * - change by: when it is empty, t + R;
 * - total runtime: a full battery's life at that drain, R / L.
 *
 * A wired sensor reports level 1 with no runtime; a sensor never heard has no report: both
 * have no dates.
 */
export const CHANGE_AT_LEVEL = 0.1;

export interface BatteryDates {
  powerType: 'battery' | 'wired';
  lastChangeMs: number | null;
  nextChangeMs: number | null;
  changeByMs: number | null;
  totalRuntimeDays: number | null;
}

const NONE = { lastChangeMs: null, nextChangeMs: null, changeByMs: null, totalRuntimeDays: null } as const;

export function batteryDates(s: SensorStatus | null): BatteryDates {
  const level = s?.batteryLevel ?? null;
  const runtimeS = s?.batteryRuntimeS ?? null;
  const at = s?.healthAtMs ?? null;
  if (level === null || runtimeS === null || at === null) return { powerType: 'battery', ...NONE };
  if (level >= 1 && runtimeS === 0) return { powerType: 'wired', ...NONE };
  // An empty battery (level 0) has no drain rate left to extrapolate from: it is due now.
  if (level <= 0 || runtimeS <= 0)
    return { powerType: 'battery', lastChangeMs: null, nextChangeMs: at, changeByMs: at, totalRuntimeDays: null };
  const runtimeMs = runtimeS * 1000;
  return {
    powerType: 'battery',
    lastChangeMs: Math.round(at - (runtimeMs * (1 - level)) / level),
    nextChangeMs: Math.round(at + Math.max(0, (runtimeMs * (level - CHANGE_AT_LEVEL)) / level)),
    changeByMs: Math.round(at + runtimeMs),
    totalRuntimeDays: Math.round((runtimeS / level / 86_400) * 10) / 10,
  };
}

/**
 * The battery's charge in percent (0–100, two decimals: a day's drain is a few hundredths of a
 * percent) from the newest health report; null for a wired sensor (level 1, no runtime) and a
 * sensor never heard. The same level the run summary prints as "battery: min 99.97%".
 */
export function batteryPercent(s: SensorStatus | null): number | null {
  const level = s?.batteryLevel ?? null;
  if (level === null || s?.batteryRuntimeS === null || s?.batteryRuntimeS === undefined) return null;
  if (level >= 1 && s.batteryRuntimeS === 0) return null;
  return Math.round(Math.min(1, Math.max(0, level)) * 10_000) / 100;
}

/** ISO 8601 UTC, or null. */
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
