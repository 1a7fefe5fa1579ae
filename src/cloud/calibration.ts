import type { LocalDays } from './local-day.js';
import type { OccupancyPoint } from './traffic-occupancy.js';

/**
 * Calibrated traffic occupancy (spec §4.4 `filter.calibrated`: "correcting accumulated
 * miscounts"), pure. Raw traffic occupancy drifts when a counter misses a crossing; the
 * model keeps a drift estimate `offset` per local day and reports `raw − offset`:
 *
 * 1. At the day's first instant the offset is 0 (raw restarts at 0 there too).
 * 2. **Anchors** set the offset so the calibrated value equals a known occupancy k:
 *    a manual calibration point (its minute), a known-empty period (k = 0), a presence hint
 *    from complete presence coverage (k = presence), or `QUIET_EMPTY_MINUTES` consecutive
 *    minutes in which presence over the space saw nobody (k = 0).
 * 3. **Lower bound**: the calibrated value is never below the people presence sensors see
 *    in the space (partial coverage) nor below 0; when it would be, the offset follows raw.
 *
 * Invariants (tested): never negative; 0 inside known-empty periods; equal to raw when
 * raw is exact and the hints agree with it (no drift, no correction).
 */
export const QUIET_EMPTY_MINUTES = 30;

export interface CalibrationPoint {
  timestampMs: number;
  occupancy: number;
}

export interface CalibrationHints {
  calibrationPoints?: readonly CalibrationPoint[];
  /** Half-open [fromMs, toMs) periods in which the space is known to be empty. */
  emptyPeriods?: ReadonlyArray<{ fromMs: number; toMs: number }>;
  /** Presence occupancy of the space per minute, where presence sensors cover it. */
  presence?: ReadonlyMap<number, number>;
  /** Whether presence covers the whole space (its value is then exact, not a lower bound). */
  presenceComplete?: boolean;
}

const floorToMinute = (ms: number): number => Math.floor(ms / 60_000) * 60_000;

export function calibrate(
  raw: readonly OccupancyPoint[],
  days: LocalDays,
  hints: CalibrationHints = {},
): OccupancyPoint[] {
  const points = new Map<number, number>();
  for (const p of hints.calibrationPoints ?? []) points.set(floorToMinute(p.timestampMs), Math.max(0, p.occupancy));
  const empty = hints.emptyPeriods ?? [];
  const presence = hints.presence ?? new Map<number, number>();
  let day = Number.NaN;
  let offset = 0;
  let quiet = 0;
  return raw.map(({ minuteMs, value: r }) => {
    const d = days.dayStartOf(minuteMs);
    if (d !== day) {
      day = d;
      offset = 0;
    }
    const seen = presence.get(minuteMs);
    quiet = seen === 0 ? quiet + 1 : 0;
    const known = knownAt(minuteMs, points, empty, seen, hints.presenceComplete === true, quiet);
    if (known !== null) offset = r - known;
    const floor = Math.max(0, seen ?? 0);
    if (r - offset < floor) offset = r - floor;
    return { minuteMs, value: r - offset };
  });
}

/** The known occupancy at a minute, strongest evidence first; null when unknown. */
function knownAt(
  minuteMs: number,
  points: ReadonlyMap<number, number>,
  empty: ReadonlyArray<{ fromMs: number; toMs: number }>,
  seen: number | undefined,
  presenceComplete: boolean,
  quietMinutes: number,
): number | null {
  const point = points.get(minuteMs);
  if (point !== undefined) return point;
  if (empty.some((p) => minuteMs >= p.fromMs && minuteMs < p.toMs)) return 0;
  if (seen !== undefined && presenceComplete) return seen;
  if (quietMinutes >= QUIET_EMPTY_MINUTES) return 0;
  return null;
}
