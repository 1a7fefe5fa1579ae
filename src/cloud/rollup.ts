import { DAY_MS, HOUR_MS, MINUTE_MS } from '../core/time.js';
import { zoneOffsetFn, type LocalDays } from './local-day.js';

/**
 * Multi-resolution buckets of spec §4.4 (`window.every`: 1m, 5m, 15m, 30m, 1h, 1d) and the
 * retention tiers of spec §8 ("older data is available only at coarser intervals"). Buckets
 * are aligned in the site's local time, so an hour in Asia/Kolkata (+05:30) starts at :30
 * UTC, and a day is the local day (23–25 h around DST changes).
 */
import type { Interval, RollupLevel } from '../store/rows.js';

const LEVEL_MS: Record<Exclude<RollupLevel, '1d'>, number> = {
  '5m': 5 * MINUTE_MS,
  '15m': 15 * MINUTE_MS,
  '30m': 30 * MINUTE_MS,
  '1h': HOUR_MS,
};

/** How long each interval is kept, measured back from the newest finalised minute. */
export const RETENTION_MS: Record<Interval, number> = {
  '1m': 7 * DAY_MS,
  '5m': 31 * DAY_MS,
  '15m': 93 * DAY_MS,
  '30m': 186 * DAY_MS,
  '1h': 2 * 366 * DAY_MS,
  '1d': Infinity,
};

/** Computes bucket bounds for one site zone. */
export class Bucketer {
  readonly #days: LocalDays;
  readonly #offsetOf: (ms: number) => number;

  constructor(days: LocalDays) {
    this.#days = days;
    this.#offsetOf = zoneOffsetFn(days.zone);
  }

  /** [start, end) of the `level` bucket containing minute `minuteMs`. */
  bucketOf(minuteMs: number, level: RollupLevel): [number, number] {
    if (level === '1d') return [this.#days.dayStartOf(minuteMs), this.#days.nextDayStartOf(minuteMs)];
    const size = LEVEL_MS[level];
    const off = this.#offsetOf(minuteMs);
    const start = Math.floor((minuteMs + off) / size) * size - off;
    return [start, start + size];
  }
}
