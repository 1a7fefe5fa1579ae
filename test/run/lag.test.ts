import { describe, expect, it } from 'vitest';
import { formatRealTime, LagMonitor } from '../../src/run/lag.js';

describe('real-time lag monitor', () => {
  it('warns while a run is behind, at most once per 10 s of wall time', () => {
    const lag = new LagMonitor(1, 2_000);
    const warnings: string[] = [];
    // One tick a second, 5 s behind for 30 ticks: the run is behind throughout.
    for (let s = 0; s < 30; s++) {
      const w = lag.tick(5_000, s * 1_000);
      if (w !== null) warnings.push(w);
    }
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(/behind real time \(×1\) by 5\.0 s/);
    const r = lag.summary();
    expect(r.ticksBehind).toBe(30);
    expect(r.warnings).toBe(3);
  });

  it('says a run held real time when no tick was late beyond the threshold, with exact percentiles', () => {
    const lag = new LagMonitor(1, 2_000);
    for (let s = 0; s < 100; s++) expect(lag.tick(s === 99 ? 1_500 : 10, s * 1_000)).toBeNull();
    for (const age of [100, 200, 300]) lag.stored(age);
    const r = lag.summary();
    expect(r.lagMs).toEqual({ p50: 10, p99: 10, max: 1_500 });
    expect(r.sensingToStoredMs).toEqual({ p50: 200, p99: 300, max: 300 });
    expect(formatRealTime(r)).toMatch(/^real time ×1: held real time; lag p50 0\.01 s, p99 0\.01 s, max 1\.50 s/);
    expect(formatRealTime(undefined)).toBeNull();
  });
});
