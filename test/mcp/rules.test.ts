import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { median } from '../../src/mcp/occupancy.js';
import { label, trendOf } from '../../src/mcp/tools/busyness.js';
import { batteryStatus } from '../../src/mcp/tools/hardware.js';
import { matchScore } from '../../src/mcp/fuzzy.js';
import { resolveTime } from '../../src/mcp/tools/timeseries.js';

/** The reference's rules (platform-reference §5) as pure functions. */
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 2, 2, 9);
const SEED = 1313;

describe('battery status', () => {
  it('is no_battery when wired, unknown without a date, critical when overdue, due_soon within 30 days, else healthy', () => {
    const at = (days: number): string => new Date(NOW + days * DAY).toISOString();
    expect(batteryStatus({ power_type: 'wired', battery_change_by_date: at(-5) }, NOW).status).toBe('no_battery');
    expect(batteryStatus({ power_type: 'battery', battery_change_by_date: null }, NOW).status).toBe('unknown');
    expect(batteryStatus({ power_type: 'battery', battery_change_by_date: 'not a date' }, NOW).status).toBe('unknown');
    expect(batteryStatus({ power_type: 'battery', battery_change_by_date: at(-0.01) }, NOW).status).toBe('critical');
    expect(batteryStatus({ power_type: 'battery', battery_change_by_date: at(0) }, NOW).status).toBe('due_soon');
    expect(batteryStatus({ power_type: 'battery', battery_change_by_date: at(30) }, NOW).status).toBe('due_soon');
    expect(batteryStatus({ power_type: 'battery', battery_change_by_date: at(30.01) }, NOW).status).toBe('healthy');
    expect(batteryStatus({ power_type: 'battery', next_battery_change_date: at(10) }, NOW)).toEqual({
      status: 'due_soon',
      by: at(10),
    });
  });
});

describe('busyness', () => {
  it('labels quiet below 30 %, busy from 70 %, moderate between', () => {
    expect([0, 29.9, 30, 69.9, 70, 250].map((u) => label(u, 30, 70))).toEqual([
      'quiet',
      'quiet',
      'moderate',
      'moderate',
      'busy',
      'busy',
    ]);
  });

  it('calls a trend lighter below −15 %, busier above +15 %, typical between', () => {
    expect(trendOf(8, 10)).toEqual({ trend: 'lighter', pct: -20 });
    expect(trendOf(8.5, 10)).toEqual({ trend: 'typical', pct: -15 });
    expect(trendOf(11.5, 10)).toEqual({ trend: 'typical', pct: 15 });
    expect(trendOf(12, 10)).toEqual({ trend: 'busier', pct: 20 });
    expect(trendOf(0, 0).trend).toBe('typical');
    expect(trendOf(3, 0)).toEqual({ trend: 'busier', pct: null });
  });
});

describe('current occupancy median', () => {
  it(`lies between the smallest and largest value and ignores order (fast-check seed ${SEED})`, () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 5 }), (xs) => {
        const m = median(xs) as number;
        expect(m).toBeGreaterThanOrEqual(Math.min(...xs));
        expect(m).toBeLessThanOrEqual(Math.max(...xs));
        expect(median([...xs].reverse())).toBe(m);
      }),
      { seed: SEED },
    );
    expect(median([3, 1, 2, 9, 9])).toBe(3);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    expect(median([])).toBeNull();
  });
});

describe('fuzzy search score', () => {
  it('ranks exact, prefix, word prefix, substring, then similar spellings; unrelated names do not match', () => {
    expect(matchScore('Kitchen', 'kitchen')).toBe(1);
    expect(matchScore('open', 'Open office')).toBe(0.9);
    expect(matchScore('off', 'Open office')).toBe(0.8);
    expect(matchScore('fice', 'Open office')).toBe(0.7);
    expect(matchScore('ofice', 'Open office')).toBeGreaterThan(0.45);
    expect(matchScore('kitchen', 'Meeting room')).toBe(0);
  });
});

describe('time-series times', () => {
  it("resolve relative offsets from the platform's present", () => {
    expect(resolveTime('now', NOW)).toBe(NOW);
    expect(resolveTime('-6h', NOW)).toBe(NOW - 6 * 3_600_000);
    expect(resolveTime('-2d', NOW)).toBe(NOW - 2 * DAY);
    expect(resolveTime('2026-03-02T08:00:00+01:00', NOW)).toBe(Date.UTC(2026, 2, 2, 7));
  });
});
