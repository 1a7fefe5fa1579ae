import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { windowsBetween, windowStart } from '../../../src/api/reporting/windows.js';

const H = 3_600_000;

describe('reporting windows', () => {
  it('make a 23-hour day when Paris springs forward and a 25-hour day when it falls back', () => {
    const spring = windowsBetween(Date.UTC(2026, 2, 29, 0), Date.UTC(2026, 2, 29, 12), '1d', 'Europe/Paris');
    expect(spring.map((w) => (w.stopMs - w.startMs) / H)).toEqual([23]);
    const fall = windowsBetween(Date.UTC(2026, 9, 25, 0), Date.UTC(2026, 9, 25, 12), '1d', 'Europe/Paris');
    expect(fall.map((w) => (w.stopMs - w.startMs) / H)).toEqual([25]);
  });

  it('start a day at its first valid instant when local midnight does not exist', () => {
    const [w] = windowsBetween(Date.UTC(2026, 8, 6, 12), Date.UTC(2026, 8, 6, 13), '1d', 'America/Santiago');
    expect(new Date(w!.startMs).toISOString()).toBe('2026-09-06T04:00:00.000Z'); // 01:00 local
  });

  it('tile any range without gaps or overlaps, each window holding its own start (fast-check seed 5)', () => {
    const zones = ['UTC', 'Europe/Paris', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/Santiago', 'Australia/Lord_Howe'];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2027, 11, 1) }),
        fc.integer({ min: 1, max: 3 * 24 * 60 }),
        fc.constantFrom('5m', '15m', '30m', '1h', '1d'),
        fc.constantFrom(...zones),
        (start, minutes, every, zone) => {
          const ws = windowsBetween(start, start + minutes * 60_000, every as '1h', zone);
          if (ws.length === 0 || ws[0]!.startMs > start) return false;
          for (let i = 0; i < ws.length; i++) {
            const w = ws[i]!;
            if (w.stopMs <= w.startMs || windowStart(w.startMs, every as '1h', zone) !== w.startMs) return false;
            if (i > 0 && ws[i - 1]!.stopMs !== w.startMs) return false;
          }
          return ws[ws.length - 1]!.stopMs >= start + minutes * 60_000;
        },
      ),
      { seed: 5, numRuns: 300 },
    );
  });
});
