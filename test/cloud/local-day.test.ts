import { describe, expect, it } from 'vitest';
import { LocalDays } from '../../src/cloud/local-day.js';

/**
 * The reset property of issue #5 over every zone the runtime knows × every day of 2024–2027
 * (≈ 610 k days on Node 20): checked with an independent Intl formatter, not luxon. The full
 * sweep is the default (a few seconds); OCCUSIM_TZ_SWEEP_ZONES=N bounds it to N zones.
 */
const H = 3_600_000;
const ALLOWED_HOURS = new Set([23, 23.5, 24, 24.5, 25]);
// Antarctica/Troll switches between UTC+0 and UTC+2: its DST days really last 22 and 26 h.
const TWO_HOUR_DST = new Set(['Antarctica/Troll']);

function localDateFn(zone: string): (ms: number) => string {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (ms) => f.format(ms);
}

function* datesOf(fromYear: number, toYear: number): Generator<string> {
  for (let t = Date.UTC(fromYear, 0, 1); t < Date.UTC(toYear + 1, 0, 1); t += 24 * H)
    yield new Date(t).toISOString().slice(0, 10);
}

function sweepZone(zone: string): string[] {
  const days = new LocalDays(zone);
  const dateOf = localDateFn(zone);
  const problems: string[] = [];
  // 2024-01-01 begins between 2023-12-31T10:00Z (UTC+14) and 2024-01-01T12:00Z (UTC−12).
  let t = days.dayStartOf(Date.UTC(2023, 11, 31, 10));
  while (dateOf(t) < '2024-01-01') t = days.nextDayStartOf(t);
  let prev = Number.NaN;
  for (const date of datesOf(2024, 2027)) {
    if (dateOf(t) !== date) problems.push(`${zone}: reset ${new Date(t).toISOString()} is not on ${date}`);
    if (dateOf(t - 1) === date)
      problems.push(`${zone}: reset ${new Date(t).toISOString()} is not the first instant of ${date}`);
    if (days.dayStartOf(t + 1) !== t) problems.push(`${zone}: dayStartOf inside ${date} disagrees`);
    const hours = (t - prev) / H;
    const allowed = ALLOWED_HOURS.has(hours) || (TWO_HOUR_DST.has(zone) && (hours === 22 || hours === 26));
    if (!Number.isNaN(prev) && !allowed) problems.push(`${zone}: ${date} starts ${hours} h after the previous day`);
    prev = t;
    t = days.nextDayStartOf(t);
  }
  return problems;
}

describe('LocalDays', () => {
  it('puts every reset of 2024–2027 on its local date, at its first valid instant, 23–25 h apart, in every zone', () => {
    const limit = Number(process.env.OCCUSIM_TZ_SWEEP_ZONES ?? Infinity);
    const zones = Intl.supportedValuesOf('timeZone').slice(0, limit);
    const problems = zones.flatMap(sweepZone);
    expect(problems.slice(0, 10)).toEqual([]);
    expect(zones.length).toBeGreaterThan(Math.min(limit, 300));
  });

  it('starts the day at 01:00 where midnight does not exist (America/Santiago, 2024-09-08)', () => {
    const days = new LocalDays('America/Santiago');
    // 2024-09-08 00:00 -04:00 does not exist: clocks jump to 01:00 -03:00 = 04:00Z.
    expect(new Date(days.dayStartOf(Date.UTC(2024, 8, 8, 12))).toISOString()).toBe('2024-09-08T04:00:00.000Z');
    expect(days.nextDayStartOf(Date.UTC(2024, 8, 8, 12)) - days.dayStartOf(Date.UTC(2024, 8, 8, 12))).toBe(23 * H);
  });

  it('gives Lord Howe Island its 23.5 h and 24.5 h days', () => {
    const days = new LocalDays('Australia/Lord_Howe');
    const lengths = new Set<number>();
    for (let t = days.dayStartOf(Date.UTC(2025, 0, 1)); t < Date.UTC(2026, 0, 1); t = days.nextDayStartOf(t))
      lengths.add((days.nextDayStartOf(t) - t) / H);
    expect([...lengths].sort()).toEqual([23.5, 24, 24.5]);
  });

  it('jumps backwards and far forwards without drifting', () => {
    const days = new LocalDays('Europe/Berlin');
    expect(new Date(days.dayStartOf(Date.UTC(2026, 2, 29, 12))).toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(new Date(days.dayStartOf(Date.UTC(2024, 0, 1, 12))).toISOString()).toBe('2023-12-31T23:00:00.000Z');
    expect(new Date(days.dayStartOf(Date.UTC(2027, 6, 1, 12))).toISOString()).toBe('2027-06-30T22:00:00.000Z');
  });
});
