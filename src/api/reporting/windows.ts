import { DateTime } from 'luxon';
import { EVERY_MS, type Every } from './request.js';

/**
 * Reporting windows in the requested time zone. Windows up to an hour align to local
 * wall-clock multiples (so 1 h windows in Asia/Kolkata start at :30 UTC); 1 d windows run
 * from one local day's first instant to the next (23, 23.5, 24.5 or 25 h on DST days;
 * where 00:00 does not exist, the day starts at its first valid instant).
 */
export interface Window {
  startMs: number;
  stopMs: number;
}

function offsetMs(ms: number, zone: string): number {
  return DateTime.fromMillis(ms, { zone }).offset * 60_000;
}

/** Start of the window containing `ms`. */
export function windowStart(ms: number, every: Every, zone: string): number {
  if (every === '1d') return DateTime.fromMillis(ms, { zone }).startOf('day').toMillis();
  const size = EVERY_MS[every];
  const off = offsetMs(ms, zone);
  return ms - ((((ms + off) % size) + size) % size);
}

function nextStart(start: number, every: Every, zone: string): number {
  if (every === '1d')
    return DateTime.fromMillis(start, { zone }).startOf('day').plus({ days: 1 }).startOf('day').toMillis();
  const next = start + EVERY_MS[every];
  // Across an offset change, realign to the local grid (never step backwards).
  const aligned = windowStart(next, every, zone);
  return aligned > start ? aligned : next;
}

/** Every window that overlaps [startMs, stopMs), clipped to nothing: whole windows. */
export function windowsBetween(startMs: number, stopMs: number, every: Every, zone: string): Window[] {
  const out: Window[] = [];
  let s = windowStart(startMs, every, zone);
  while (s < stopMs) {
    const e = nextStart(s, every, zone);
    out.push({ startMs: s, stopMs: e });
    s = e;
  }
  return out;
}

/** RFC 3339 in the zone, e.g. `2026-03-02T08:00:00+01:00`. */
export function rfc3339(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: true }) ?? new Date(ms).toISOString();
}

export function offsetText(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toFormat('ZZ');
}

/** Local minute of day and ISO weekday (1 = Monday) of an instant. */
export function localParts(ms: number, zone: string): { minute: number; weekday: number } {
  const d = DateTime.fromMillis(ms, { zone });
  return { minute: d.hour * 60 + d.minute, weekday: d.weekday };
}
