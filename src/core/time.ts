import { DateTime, IANAZone } from 'luxon';

/**
 * Time arithmetic in sites' IANA zones (luxon handles DST gaps: a local midnight that does
 * not exist resolves to the first instant of the day) and parsing of scenario durations.
 */
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const DURATION_RE =
  /^(?:(\d+(?:\.\d+)?)d)?(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/;

/** Parses `90s`, `30m`, `2h`, `1h30m`, `1d`, `500ms`; null when malformed or empty. */
export function parseDuration(text: string): number | null {
  const s = text.trim();
  if (s === '') return null;
  const m = DURATION_RE.exec(s);
  if (!m) return null;
  const [, d, h, min, sec, ms] = m;
  if (d === undefined && h === undefined && min === undefined && sec === undefined && ms === undefined) return null;
  const total =
    Number(d ?? 0) * DAY_MS +
    Number(h ?? 0) * HOUR_MS +
    Number(min ?? 0) * MINUTE_MS +
    Number(sec ?? 0) * 1000 +
    Number(ms ?? 0);
  return Math.round(total);
}

/** Formats milliseconds as the shortest of `1h30m`, `45s`, ... (inverse of parseDuration for whole seconds). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms / 1000);
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const s = rest - m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}

/** `HH:MM` (or `HH:MM:SS`) → minutes after local midnight; null when malformed. */
export function parseClockTime(text: string): number | null {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * 60 + Number(m[2]) + Number(m[3] ?? 0) / 60;
}

export function isValidZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

/**
 * A local date-time (`2026-03-02T08:00`, seconds optional) in `zone` → epoch ms. An explicit
 * offset or `Z` in the text wins over the zone. Null when malformed.
 */
export function localToEpoch(text: string, zone: string): number | null {
  const dt = DateTime.fromISO(text, { zone, setZone: false });
  return dt.isValid ? dt.toMillis() : null;
}

/** First instant of the local day that contains `ms` in `zone`. */
export function startOfLocalDay(ms: number, zone: string): number {
  return DateTime.fromMillis(ms, { zone }).startOf('day').toMillis();
}

/** First instant of the local day after the one that contains `ms`. */
export function nextLocalDayStart(ms: number, zone: string): number {
  const d = DateTime.fromMillis(ms, { zone }).startOf('day').plus({ days: 1 });
  return d.startOf('day').toMillis();
}

/** Minutes after the local day's first instant (wall-clock minutes, DST-aware). */
export function localMinuteOfDay(ms: number, zone: string): number {
  const dt = DateTime.fromMillis(ms, { zone });
  return dt.hour * 60 + dt.minute + dt.second / 60;
}

/**
 * The instant of local wall time `minuteOfDay` on the local day containing `dayMs`.
 * Wall times inside a DST gap move forward, as clocks do.
 */
export function atLocalTime(dayMs: number, minuteOfDay: number, zone: string): number {
  const day = DateTime.fromMillis(dayMs, { zone });
  // Work in whole seconds so rounding can never produce second 60.
  const total = Math.min(86_399, Math.max(0, Math.round(minuteOfDay * 60)));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return DateTime.fromObject(
    { year: day.year, month: day.month, day: day.day, hour: h, minute: m, second: s },
    { zone },
  ).toMillis();
}

export function floorToMinute(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}

/** ISO 8601 in UTC with milliseconds, e.g. `2026-03-02T07:00:00.000Z`. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}

/** ISO 8601 in the zone's local time with its offset, e.g. `2026-03-02T08:00:00+01:00`. */
export function isoLocal(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: true }) ?? isoUtc(ms);
}
