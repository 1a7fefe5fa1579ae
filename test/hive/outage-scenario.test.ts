import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { runScenario } from '../../src/run/run-scenario.js';

const FILE = new URL('../../scenarios/hive-outage.yaml', import.meta.url).pathname;

// scenarios/hive-outage.yaml end to end over real MQTT: a 10-minute backhaul outage at 20 min
// and 30 % extra loss on the mesh links of the far offices.
describe('the hive-outage scenario', () => {
  it('loses nothing: the hive buffers the outage, the mesh retries, and the late minutes land in the stored series', async () => {
    const loaded = loadScenarioFile(FILE);
    if (!loaded.ok) throw new Error('scenario does not load');
    const outage = loaded.model.faults!.find((f) => f.kind === 'hive_outage')!;
    const report = await runScenario(FILE);
    const r = report.result;
    const d = r.delivery!;

    expect(r.messages.lost).toBe(0);
    expect(r.messages.packetsDelivered).toBe(r.messages.packetsSent);
    expect(d.overall.undelivered).toBe(0);
    expect(d.hives.map((h) => h.lost)).toEqual([0]);
    expect(d.hives[0]!.acked).toBe(d.hives[0]!.generated);
    expect(d.overall.meshDeliveryRatio).toBeGreaterThanOrEqual(0.999);
    expect(d.overall.meshAttemptSuccess).toBeLessThan(0.9); // the degraded links did cost retries
    expect(Object.keys(d.hopHistogram).length).toBeGreaterThanOrEqual(2);
    // The batch sent into the undetected outage is retransmitted after it.
    expect(d.overall.lostInFlight).toBe(1);
    expect(d.overall.retransmitted).toBe(1);
    // Data sensed during the outage reached the cloud ~10 minutes late…
    expect(r.latencyMs.max).toBeGreaterThan(outage.durationMs - 60_000);
    // …and every minute of the outage is in the stored presence series.
    const db = new Database(report.db, { readonly: true });
    try {
      const minutes = db
        .prepare('SELECT COUNT(DISTINCT minute_ms) AS n FROM presence_minute WHERE minute_ms >= ? AND minute_ms < ?')
        .get(outage.atMs, outage.atMs + outage.durationMs) as { n: number };
      expect(minutes.n).toBe(outage.durationMs / 60_000);
    } finally {
      db.close();
    }
    expect(d.battery.minLevel).toBeLessThan(1);
    expect(d.battery.earliestChangeBy).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
