import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { LiveHub, type LiveEvent } from '../../../src/api/live/hub.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';

function quickstart() {
  const r = loadScenarioFile(new URL('../../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

describe('the live hub', () => {
  it('coalesces a max-speed stream of instants into the latest, and joins truth with what was measured', async () => {
    const model = quickstart();
    const assets = catalogueFromScenario(model);
    let wall = 0;
    const hub = new LiveHub({
      assets,
      status: { hiveStatus: () => null, sensorStatus: () => null },
      now: () => wall,
      minGapMs: 50,
      measured: {
        presence: (id) => (id === model.rooms[1]?.id ? { minuteMs: 0, value: 3 } : null),
        traffic: () => ({ in: 2, out: 1 }),
        counters: () => ({ batchesReceived: 1, batchesProcessed: 1, duplicateBatches: 0, packetsProcessed: 9, packetsStoredBefore: 0, deadLettered: 0, eventsEmitted: 4, lateInWindow: 0, lateBeyondWindow: 0 }),
      },
    });
    const floorId = model.floors[0]?.id as string;
    const got: LiveEvent[] = [];
    hub.subscribe(floorId, (e) => got.push(e));
    for (let t = 0; t < 1000; t++) hub.publish({ atMs: t, people: { [floorId]: [['p', 1, 2]] }, rooms: { [model.rooms[1]?.id as string]: 4 } });
    expect(got.map((e) => e.atMs)).toEqual([0]); // the first at once, the rest wait for the gap
    wall = 60;
    await new Promise((r) => setTimeout(r, 80));
    expect(got.map((e) => e.atMs)).toEqual([0, 999]);
    const last = got[1] as LiveEvent;
    expect(last.rooms.find((r) => r.id === model.rooms[1]?.id)).toMatchObject({ true: 4, measured: 3 });
    expect(last.rooms.find((r) => r.id === model.rooms[0]?.id)).toMatchObject({ true: 0, measured: null });
    expect(last.doors).toHaveLength(model.sensors.filter((s) => s.mode === 'traffic').length);
    expect(last.hives.every((h) => !h.online)).toBe(true);
    expect(last.ledger).toMatchObject({ packetsProcessed: 9, eventsEmitted: 4 });
    // A late subscriber gets the latest state at once.
    const late: LiveEvent[] = [];
    hub.subscribe(floorId, (e) => late.push(e));
    expect(late.map((e) => e.atMs)).toEqual([999]);
    hub.close();
  });
});
