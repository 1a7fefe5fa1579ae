import { describe, expect, it } from 'vitest';
import {
  atLocalTime,
  formatDuration,
  isValidZone,
  localToEpoch,
  nextLocalDayStart,
  parseClockTime,
  parseDuration,
  startOfLocalDay,
} from '../../src/core/time.js';

describe('durations and clock times', () => {
  it('parse the scenario duration forms', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('250ms')).toBe(250);
    for (const bad of ['', 'h', '3', '1x', '-1h', '1h 30m']) expect(parseDuration(bad)).toBeNull();
  });

  it('format durations back', () => {
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(45_000)).toBe('45s');
  });

  it('parse HH:MM times of day', () => {
    expect(parseClockTime('08:30')).toBe(510);
    expect(parseClockTime('24:00')).toBeNull();
    expect(parseClockTime('8h')).toBeNull();
  });
});

describe('local time in IANA zones', () => {
  it('recognise zones', () => {
    expect(isValidZone('Europe/Paris')).toBe(true);
    expect(isValidZone('Mars/Olympus')).toBe(false);
  });

  it('read local start times in the site zone', () => {
    expect(localToEpoch('2026-03-02T08:00', 'Europe/Paris')).toBe(Date.UTC(2026, 2, 2, 7, 0));
    expect(localToEpoch('2026-03-02T08:00Z', 'Europe/Paris')).toBe(Date.UTC(2026, 2, 2, 8, 0));
    expect(localToEpoch('yesterday', 'Europe/Paris')).toBeNull();
  });

  it('find the first instant of a local day even when midnight does not exist', () => {
    // America/Santiago springs forward at 24:00 on 2026-09-05: the day starts at 01:00 local.
    const day = Date.UTC(2026, 8, 6, 12, 0);
    const start = startOfLocalDay(day, 'America/Santiago');
    expect(new Date(start).toISOString()).toBe('2026-09-06T04:00:00.000Z');
    expect(nextLocalDayStart(start - 1, 'America/Santiago')).toBe(start);
  });

  it('place wall times on the local day', () => {
    const day = Date.UTC(2026, 2, 2, 12);
    expect(atLocalTime(day, 9 * 60, 'Europe/Paris')).toBe(Date.UTC(2026, 2, 2, 8, 0));
  });
});

describe('wall times near the end of the day', () => {
  it('never produce an invalid second when minutes are fractional', () => {
    const day = Date.UTC(2026, 2, 2, 12);
    expect(Number.isFinite(atLocalTime(day, 1439.999, 'Europe/Paris'))).toBe(true);
    expect(atLocalTime(day, 1439.999, 'Europe/Paris')).toBe(Date.UTC(2026, 2, 2, 22, 59, 59));
  });
});
