import { describe, expect, it } from 'vitest';
import { platformNow } from '../../src/api/present.js';
import type { StatusSource } from '../../src/api/status.js';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import type { HiveStatus } from '../../src/store/port.js';
import { VirtualClock } from '../../src/core/clock.js';
import { loadScenarioFile } from '../../src/scenario/load.js';

const loaded = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
if (!loaded.ok) throw new Error('quickstart does not load');
const model = loaded.model;
const catalogue = catalogueFromScenario(model);
const WALL = Date.UTC(2026, 10, 24, 21, 30, 42);

function heardAt(ms: number | null): StatusSource {
  const hive = model.hives[0]!;
  const status =
    ms === null
      ? null
      : ({
          hiveId: hive.id,
          hiveSerial: hive.serial,
          lastHeartbeatMs: ms,
          sentAtMs: ms,
          state: 'running',
        } as unknown as HiveStatus);
  return {
    hiveStatuses: (ids) => Promise.resolve(ids.map(() => status)),
    sensorStatuses: (ids) => Promise.resolve(ids.map(() => null)),
  };
}

describe('"now" for reporting: the platform\'s present', () => {
  it("is a finished run's last heartbeat, truncated to the minute, however long ago the run ended in wall time", async () => {
    const end = model.startMs + 40 * 60_000 + 25_000;
    expect(await platformNow(catalogue, new VirtualClock(WALL), heardAt(end))(model.org.id)).toBe(
      model.startMs + 40 * 60_000,
    );
  });

  it("is the API's clock when the hives are live on it, or when none was ever heard", async () => {
    const minute = Math.floor(WALL / 60_000) * 60_000;
    expect(await platformNow(catalogue, new VirtualClock(WALL), heardAt(WALL - 50_000))(model.org.id)).toBe(minute);
    expect(await platformNow(catalogue, new VirtualClock(WALL), heardAt(null))(model.org.id)).toBe(minute);
    expect(await platformNow(catalogue, new VirtualClock(WALL), undefined)(model.org.id)).toBe(minute);
  });
});
