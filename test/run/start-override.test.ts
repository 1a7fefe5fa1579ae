import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { cli } from '../cli/fixtures/run-cli.js';

const scenario = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

describe('the start override', () => {
  it("moves the whole run: the store's minutes begin at the new start", async () => {
    const start = '2026-11-23T07:00:00Z';
    const report = await runScenario(scenario, { start, durationMs: 10 * 60_000 });
    const model = (
      loadScenarioFile(scenario, { start }) as { ok: true; model: { startMs: number; floors: Array<{ id: string }> } }
    ).model;
    expect(model.startMs).toBe(Date.parse(start));
    const store = new SqliteStore(report.db);
    try {
      const minutes = store
        .presenceSeries(model.floors[0]!.id, '1m', 0, Number.MAX_SAFE_INTEGER)
        .map((p) => p.bucketMs);
      expect(minutes.length).toBeGreaterThan(5);
      expect(Math.min(...minutes)).toBe(Date.parse(start));
      expect(Math.max(...minutes)).toBeLessThan(Date.parse(start) + 10 * 60_000);
    } finally {
      store.close();
    }
  });

  it("reads a site-local start in the site's zone (Paris is UTC+1 in November)", () => {
    const r = loadScenarioFile(scenario, { start: '2026-11-23T08:00' });
    expect(r.ok && r.model.startMs).toBe(Date.parse('2026-11-23T07:00:00Z'));
  });

  it('refuses a malformed --start with a usage error naming the flag', async () => {
    const r = await cli('run', scenario, '--start', '2026-13-45T08:00');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--start must be 'now' or a time like/);
  });
});

describe('the timeline moved onto another start (--start now)', () => {
  it('an evening start is not an empty building: people arrive as they would at the scenario\u2019s start', async () => {
    const evening = Date.parse('2026-11-23T19:00:00Z'); // 20:00 in Paris: everyone has gone home
    const clockTimes = await runScenario(scenario, {
      start: '2026-11-23T20:00',
      durationMs: 40 * 60_000,
      keepStore: false,
    });
    const timeline = await runScenario(scenario, {
      timelineStartMs: evening,
      durationMs: 40 * 60_000,
      keepStore: false,
    });
    const floorTrue = (r: typeof timeline): number =>
      r.result.presence.spaces.find((s) => s.kind === 'floor')!.meanTrue;
    expect(floorTrue(clockTimes)).toBe(0);
    expect(floorTrue(timeline)).toBeGreaterThan(1);
    expect(timeline.result.scenario.start).toBe(new Date(evening).toISOString());
  });
});
