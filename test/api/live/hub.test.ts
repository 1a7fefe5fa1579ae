import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { DETECTION_MAX_AGE_MS, LiveHub, MAX_DETECTIONS_PER_EVENT, type LiveEvent } from '../../../src/api/live/hub.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';

function quickstart() {
  const r = loadScenarioFile(new URL('../../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

/** The store port's reads are asynchronous: an event is sent once they have answered (these answer at once). */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
const noStatus = {
  hiveStatuses: (ids: readonly string[]) => Promise.resolve(ids.map(() => null)),
  sensorStatuses: (ids: readonly string[]) => Promise.resolve(ids.map(() => null)),
};

describe('the live hub', () => {
  it('coalesces a max-speed stream of instants into the latest, and joins truth with what was measured', async () => {
    const model = quickstart();
    const assets = catalogueFromScenario(model);
    let wall = 0;
    const hub = new LiveHub({
      assets,
      status: noStatus,
      now: () => wall,
      minGapMs: 50,
      measured: {
        presence: async (id) => (id === model.rooms[1]?.id ? { minuteMs: 0, value: 3 } : null),
        traffic: async () => ({ in: 2, out: 1 }),
        counters: () => ({
          batchesReceived: 1,
          batchesProcessed: 1,
          duplicateBatches: 0,
          packetsProcessed: 9,
          packetsStoredBefore: 0,
          deadLettered: 0,
          eventsEmitted: 4,
          lateInWindow: 0,
          lateBeyondWindow: 0,
        }),
      },
    });
    const floorId = model.floors[0]?.id as string;
    const got: LiveEvent[] = [];
    hub.subscribe(floorId, (e) => got.push(e));
    for (let t = 0; t < 1000; t++)
      hub.publish({ atMs: t, people: { [floorId]: [['p', 1, 2]] }, rooms: { [model.rooms[1]?.id as string]: 4 } });
    await settle();
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
    await settle();
    expect(late.map((e) => e.atMs)).toEqual([999]);
    hub.close();
  });

  it("draws each presence sensor's latest ingested frame on its floor, bounded in age and count", async () => {
    const model = quickstart();
    const assets = catalogueFromScenario(model);
    const hub = new LiveHub({
      assets,
      status: noStatus,
      now: () => 0,
      measured: {
        presence: async () => null,
        traffic: async () => ({ in: 0, out: 0 }),
        counters: () => ({
          batchesReceived: 0,
          batchesProcessed: 0,
          duplicateBatches: 0,
          packetsProcessed: 0,
          packetsStoredBefore: 0,
          deadLettered: 0,
          eventsEmitted: 0,
          lateInWindow: 0,
          lateBeyondWindow: 0,
        }),
      },
    });
    const floorId = model.floors[0]?.id as string;
    const [a, b] = model.sensors.filter((s) => s.mode !== 'traffic').map((s) => s.id) as [string, string];
    const frame = (sensorId: string, t: number, world: Array<[number, number]>) => ({
      eventId: `${sensorId}-${t}`,
      type: 'DETECTIONS' as const,
      sensorId,
      timestampMs: t,
      data: { local: world, world },
    });
    hub.detections(frame(a, 1000, [[1.234, 2.345]]));
    hub.detections(frame(a, 3000, [[3.001, 4.009]]));
    hub.detections(frame(a, 2000, [[9, 9]])); // late, older than the frame kept: ignored
    hub.detections(frame(b, 0, [[5, 5]]));
    hub.detections({ eventId: 't', type: 'TRAFFIC', sensorId: b, timestampMs: 99_000, data: { in: 1, out: 0 } });
    const at = (atMs: number) => hub.event(floorId, { atMs, people: {}, rooms: {} });
    // The floor's sensors in catalogue order, each frame rounded to the centimetre.
    const order = assets.find('floor', floorId)?.item.sensorIds ?? [];
    const expected = [a, b]
      .sort((x, y) => order.indexOf(x) - order.indexOf(y))
      .map((id) => (id === a ? [3, 4.01] : [5, 5]));
    expect((await at(3000)).detections).toEqual(expected);
    // b's frame at 0 is stale once the instant shown is more than DETECTION_MAX_AGE_MS later.
    expect((await at(DETECTION_MAX_AGE_MS + 1)).detections).toEqual([[3, 4.01]]);
    // A crowded frame is cut at the bound, and says so.
    hub.detections(
      frame(
        b,
        4000,
        Array.from({ length: MAX_DETECTIONS_PER_EVENT + 5 }, (_, i) => [i / 1000, 0] as [number, number]),
      ),
    );
    const e = await at(4000);
    expect(e.detections).toHaveLength(MAX_DETECTIONS_PER_EVENT);
    expect(e.detectionsDropped).toBe(6);
    // The pipeline builds detections only while a browser watches; the last one leaving drops the frames.
    expect(hub.watched).toBe(false);
    const stop = hub.subscribe(floorId, () => undefined);
    expect(hub.watched).toBe(true);
    stop();
    expect(hub.watched).toBe(false);
    expect((await at(4000)).detections).toEqual([]);
    hub.close();
  });
});
