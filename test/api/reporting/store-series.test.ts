import { describe, expect, it } from 'vitest';
import { computePoints } from '../../../src/api/reporting/report.js';
import { parseReportingRequest } from '../../../src/api/reporting/request.js';
import { storeSeries } from '../../../src/api/reporting/store-series.js';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { sqliteStore } from '../../../src/store/sqlite-async.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';

const H = 3_600_000;

describe('reporting over the SQLite store', () => {
  it('answers coarse max windows from the rollups, even once the minutes are pruned', async () => {
    const r = loadScenarioFile(new URL('../../../scenarios/quickstart.yaml', import.meta.url).pathname);
    if (!r.ok) throw new Error('quickstart does not load');
    const model = r.model;
    const office = model.rooms.find((x) => x.name === 'Open office')!;
    const store = sqliteStore(':memory:');
    const t0 = Date.UTC(2026, 2, 2, 7); // 08:00 Paris
    await store.writePresenceMinutes(
      Array.from({ length: 120 }, (_, i) => ({
        spaceId: office.id,
        minuteMs: t0 + i * 60_000,
        value: i < 60 ? 3 : 6,
        samples: 60,
      })),
    );
    await store.refreshRollups(
      [0, 1].map((h) => ({ spaceId: office.id, level: '1h' as const, startMs: t0 + h * H, endMs: t0 + (h + 1) * H })),
    );
    const series = storeSeries(store, catalogueFromScenario(model));
    const assets = catalogueFromScenario(model);
    const ask = async (fn: string, tz: string): Promise<Array<number | null>> =>
      (
        await computePoints(
          assets,
          series,
          model.org.id,
          parseReportingRequest({
            window: { every: '1h', function: fn, timezone: tz },
            filter: {
              measurements: ['room_occupancy'],
              rooms: { eq: [office.id] },
              start: new Date(t0).toISOString(),
              stop: new Date(t0 + 2 * H).toISOString(),
            },
          }),
        )
      ).map((p) => p.value as number | null);
    expect(await ask('max', 'Europe/Paris')).toEqual([3, 6]);
    expect(await ask('mean', 'Europe/Paris')).toEqual([3, 6]);
    await store.prune({ '1m': t0 + 3 * H });
    expect(await ask('max', 'Europe/Paris')).toEqual([3, 6]); // from the 1h rollup
    expect(await ask('mean', 'Europe/Paris')).toEqual([]); // needs minutes, which are gone
    expect(await ask('max', 'UTC')).toEqual([]); // rollups are aligned in the site's zone only
    await store.close();
  });
});
