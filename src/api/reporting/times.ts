import { DateTime } from 'luxon';
import { invalidRequest } from '../errors.js';

/**
 * The time spellings of reporting requests (platform-reference §3): RFC 3339 timestamps,
 * relative times (`now`, `-5m`, `-24h`, `-2d`, `-1h30m`, `now-5m`) against the platform's present,
 * and durations for `window.every` (`60s` is `1m`).
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w))+$/;

/** A duration such as `60s`, `5m`, `1h30m` in ms; null when the text is not one. */
export function durationMs(text: string): number | null {
  if (!DURATION.test(text)) return null;
  let total = 0;
  for (const m of text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return total;
}

/** The offset from now of a relative time (`now`, `-5m`, `now-5m`), in ms; null when the text is not one. */
function relativeMs(text: string): number | null {
  const t = text.trim();
  if (t === 'now') return 0;
  const ago = t.startsWith('now-') ? t.slice(4) : t.startsWith('-') ? t.slice(1) : null;
  const ms = ago === null ? null : durationMs(ago);
  return ms === null ? null : -ms;
}

/** Whether the text is a relative time (`now`, `-5m`, `now-5m`). */
export function isRelative(text: string): boolean {
  return relativeMs(text) !== null;
}

/**
 * An instant: an RFC 3339 / ISO 8601 timestamp, or (with `nowMs`) a relative time.
 * `nowMs` null: relative times are refused with a message that says so.
 */
export function parseInstant(x: unknown, path: string, nowMs: number | null): number {
  if (typeof x !== 'string')
    throw invalidRequest(`${path} must be an RFC 3339 timestamp or a relative time such as -5m`);
  const t = x.trim();
  const offset = relativeMs(t);
  if (offset !== null) {
    if (nowMs === null)
      throw invalidRequest(`${path}: relative times are not supported here; give an RFC 3339 timestamp`);
    return nowMs + offset;
  }
  const dt = DateTime.fromISO(t, { zone: 'utc' });
  if (!dt.isValid)
    throw invalidRequest(
      `${path} must be an RFC 3339 timestamp or a relative time (now, -5m, -24h, -2d), got ${JSON.stringify(x)}`,
    );
  return dt.toMillis();
}
