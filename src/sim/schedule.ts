import type { Rng } from '../core/rng.js';
import { atLocalTime, MINUTE_MS, nextLocalDayStart, startOfLocalDay } from '../core/time.js';
import type { PopulationModel } from '../scenario/model.js';

/**
 * Daily schedules in a site's local time. Times of day are drawn as minutes after local
 * midnight and turned into instants on the local day, so a run across midnight or a DST
 * change keeps the wall-clock schedule.
 */
export interface DayPlan {
  /** First instant of the local day this plan belongs to. */
  readonly dayStartMs: number;
  readonly arriveMs: number;
  readonly leaveMs: number;
  /** Uniform [0, 1) draw that orders who is asked to meetings that day. */
  readonly meetingKey: number;
}

/** People stay at least this long once they came in. */
export const MIN_STAY_MS = 30 * MINUTE_MS;
/** The last whole millisecond of the day, in minutes. */
const LAST_MINUTE = 24 * 60 - 1 / MINUTE_MS;

/**
 * The instant of local wall time `minuteOfDay` (fractions allowed, clamped to the day) on
 * the local day that contains `dayMs`. Whole minutes go through `atLocalTime` (DST-aware);
 * the fraction is added as elapsed time, which keeps seconds in range.
 */
export function localInstant(dayMs: number, minuteOfDay: number, zone: string): number {
  const m = Math.max(0, Math.min(LAST_MINUTE, minuteOfDay));
  const whole = Math.floor(m);
  return (
    memo(`at|${zone}|${dayMs}|${whole}`, () => atLocalTime(dayMs, whole, zone)) +
    Math.floor((m - whole) * MINUTE_MS + 1e-6)
  );
}

/** `startOfLocalDay`, memoised (thousands of people share a handful of days). */
export function localDayStart(ms: number, zone: string): number {
  return memo(`day|${zone}|${ms}`, () => startOfLocalDay(ms, zone));
}

/**
 * Time-zone arithmetic is pure but slow (luxon formats dates to find offsets), and every
 * person asks the same few questions; a bounded cache keeps fleet-sized runs fast.
 */
const cache = new Map<string, number>();
function memo(key: string, compute: () => number): number {
  let v = cache.get(key);
  if (v === undefined) {
    if (cache.size > 100_000) cache.clear();
    v = compute();
    cache.set(key, v);
  }
  return v;
}

/**
 * A population whose mean departure is earlier in the day than its mean arrival works a
 * night shift (docs/scenario-format.md): each departure falls on the local day after the
 * arrival. Decided from the means, not per draw, so a draw that lands just before the
 * arrival is still read as the next morning and never collapses the stay to `MIN_STAY_MS`.
 */
export function isNightShift(pop: PopulationModel): boolean {
  return pop.departure.meanMin < pop.arrival.meanMin;
}

/**
 * Draws one person's arrival and departure for the local day starting at `dayStartMs`. The
 * stay is the elapsed time between the two wall-clock instants, so a DST change during the
 * night lengthens or shortens it by the change, as it would for a real night shift.
 */
export function drawDayPlan(pop: PopulationModel, zone: string, dayStartMs: number, rng: Rng): DayPlan {
  const arriveMin = rng.normal(pop.arrival.meanMin, pop.arrival.sdMin);
  const leaveMin = rng.normal(pop.departure.meanMin, pop.departure.sdMin) + (isNightShift(pop) ? DAY_MIN : 0);
  const meetingKey = rng.next();
  const arriveMs = localInstant(dayStartMs, arriveMin, zone);
  const leaveMs = Math.max(instantFromDay(dayStartMs, leaveMin, zone), arriveMs + MIN_STAY_MS);
  return { dayStartMs, arriveMs, leaveMs, meetingKey };
}

const DAY_MIN = 24 * 60;

/** Local wall time `minutes` after the midnight of `dayStartMs`'s day; from 24:00 on, the next day's. */
function instantFromDay(dayStartMs: number, minutes: number, zone: string): number {
  return minutes < DAY_MIN
    ? localInstant(dayStartMs, minutes, zone)
    : localInstant(nextDay(dayStartMs, zone), minutes - DAY_MIN, zone);
}

/**
 * The local day whose plan may still have someone inside at `t`: the day before for a night
 * shift (who came in last evening and leaves this morning), the same day otherwise.
 */
export function firstPlanDay(pop: PopulationModel, t: number, zone: string): number {
  const today = localDayStart(t, zone);
  return isNightShift(pop) ? localDayStart(today - 1, zone) : today;
}

/** The local day after the one starting at `dayStartMs`. */
export function nextDay(dayStartMs: number, zone: string): number {
  return memo(`next|${zone}|${dayStartMs}`, () => nextLocalDayStart(dayStartMs, zone));
}

/** First occurrence at or after `fromMs` of a daily event at local minute `atMin`. */
export function nextDailyAt(atMin: number, zone: string, dayStartMs: number, fromMs: number): number {
  let day = dayStartMs;
  for (let i = 0; i < 3; i++) {
    const at = localInstant(day, atMin, zone);
    if (at >= fromMs) return at;
    day = nextLocalDayStart(day, zone);
  }
  return localInstant(day, atMin, zone);
}
