import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EdgePacketWriter, nextEdgePacket, packEdgePackets, unpackEdgePackets } from '../../src/edge/edge-packets.js';
import type { SensorPacket } from '../../src/edge/packet.js';
import { ModelPresenceSensor } from '../../src/edge/model-presence.js';
import { ModelTrafficSensor } from '../../src/edge/model-traffic.js';
import { createModelSensors } from '../../src/edge/sensors.js';
import { loadScenarioObject } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import type { World, WorldStep } from '../../src/sim/types.js';
import { createWorld } from '../../src/sim/world.js';

/** The edge's flat packets (src/edge/edge-packets.ts): what goes in comes out, number for number. */
describe('the edge packets in flat form', () => {
  const sensors = Array.from({ length: 8 }, (_, i) => ({ id: `s${i}` })) as unknown as ScenarioModel['sensors'];
  const double = fc.double({ noNaN: true, noDefaultInfinity: true });
  const packet = fc.oneof(
    fc.record({
      kind: fc.constant('presence' as const),
      sensor: fc.nat(7),
      sensedAtMs: fc.nat(),
      detections: fc.array(fc.tuple(double, double), { maxLength: 6 }),
    }),
    fc.record({
      kind: fc.constant('traffic' as const),
      sensor: fc.nat(7),
      sensedAtMs: fc.nat(),
      intervalMs: fc.nat(),
      in: fc.nat(),
      out: fc.nat(),
    }),
  );
  const indexOf = (id: string): number => Number(id.slice(1));

  it('unpack(pack(packets)) is the packets, in order, and copy() moves one packet under a new index (fast-check seed 23)', () => {
    fc.assert(
      fc.property(fc.array(packet, { maxLength: 200 }), (specs) => {
        const packets: SensorPacket[] = specs.map(({ sensor, ...p }) => ({ ...p, sensorId: `s${sensor}` }));
        const flat = packEdgePackets(packets, indexOf);
        expect(flat.count).toBe(packets.length);
        expect(unpackEdgePackets(flat, sensors)).toEqual(packets);
        // Re-indexed one by one as the hand-off to the hive threads does: sensor k → 7 − k.
        const w = new EdgePacketWriter();
        for (let at = 0; at < flat.data.length; at = nextEdgePacket(flat.data, at))
          w.copy(flat.data, at, 7 - (flat.data[at] as number));
        expect(unpackEdgePackets(w.take(), sensors)).toEqual(
          packets.map((p) => ({ ...p, sensorId: `s${7 - indexOf(p.sensorId)}` })),
        );
      }),
      { seed: 23, numRuns: 200 },
    );
  });

  it('a take() starts the writer over and its buffer is its own', () => {
    const w = new EdgePacketWriter();
    w.traffic(1, 10, 60_000, 2, 3);
    const first = w.take();
    w.presence(2, 20);
    w.detection(0.25, 0.5);
    w.end();
    const second = w.take();
    expect(unpackEdgePackets(first, sensors)).toEqual([
      { kind: 'traffic', sensorId: 's1', sensedAtMs: 10, intervalMs: 60_000, in: 2, out: 3 },
    ]);
    expect(unpackEdgePackets(second, sensors)).toEqual([
      { kind: 'presence', sensorId: 's2', sensedAtMs: 20, detections: [[0.25, 0.5]] },
    ]);
    expect(first.data.buffer).not.toBe(second.data.buffer);
  });

  it('a released buffer is written again by a later take, never one still held, and reads back the new packets only', () => {
    const w = new EdgePacketWriter();
    for (let k = 0; k < 10; k++) w.traffic(k % 3, k, 60_000, k, k + 1);
    const first = w.take();
    w.traffic(1, 100, 60_000, 4, 5);
    const second = w.take();
    // `first` is still held: the writer must not be writing into it.
    expect(second.data.buffer).not.toBe(first.data.buffer);
    first.release();
    expect(() => first.release()).toThrow(/released twice/);
    // The interval being written when it came back goes on in its own buffer; the next one in the released one.
    const third = w.take();
    expect(third.data.buffer).not.toBe(first.data.buffer);
    w.traffic(2, 200, 60_000, 6, 7);
    const fourth = w.take();
    expect(fourth.data.buffer).toBe(first.data.buffer);
    // Only what this interval wrote, not the longer interval the buffer held before.
    expect(unpackEdgePackets(fourth, sensors)).toEqual([
      { kind: 'traffic', sensorId: 's2', sensedAtMs: 200, intervalMs: 60_000, in: 6, out: 7 },
    ]);
    expect(unpackEdgePackets(second, sensors)).toEqual([
      { kind: 'traffic', sensorId: 's1', sensedAtMs: 100, intervalMs: 60_000, in: 4, out: 5 },
    ]);
  });

  it('the model sensors write the same packets flat as each sensor builds as objects (office-day, 20 simulated minutes)', () => {
    const doc = parse(readFileSync(new URL('../../scenarios/office-day.yaml', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    const loaded = loadScenarioObject({ ...doc, duration: '20m' }, 'office-day');
    if (!loaded.ok) throw new Error('office-day does not load');
    const model = loaded.model;
    const objects = objectSensors(model);
    const flat = createModelSensors(model);
    const [worldA, worldB] = [createWorld(model), createWorld(model)];
    const w = new EdgePacketWriter();
    const expected: SensorPacket[] = [];
    for (let t = model.startMs; t < model.startMs + model.durationMs; t += model.tickMs) {
      const a = worldA.step(t);
      for (const p of objects(a, worldA)) expected.push(p);
      flat.sampleInto(worldB.step(t), worldB, w);
    }
    const got = unpackEdgePackets(w.take(), model.sensors);
    expect(got.length).toBeGreaterThan(1000);
    expect(got.some((p) => p.kind === 'presence' && p.detections.length > 0)).toBe(true);
    expect(got.some((p) => p.kind === 'traffic')).toBe(true);
    expect(got).toEqual(expected);
  });
});

/**
 * The reference: every sensor's own object `sample`, floor by floor in the scenario's order,
 * presence sensors then traffic sensors, each in the scenario's sensor order (the order
 * `createModelSensors` promises).
 */
function objectSensors(model: ScenarioModel): (step: WorldStep, world: World) => SensorPacket[] {
  const doors = new Map(model.doors.map((d) => [d.id, d]));
  const floors = model.floors.map((f) => {
    const mine = model.sensors.filter((s) => s.floorId === f.id);
    return {
      floorId: f.id,
      presence: mine
        .filter((s) => s.mode === 'presence')
        .map((s) => new ModelPresenceSensor(s, model.noise.presence, model.seed, model.startMs)),
      traffic: mine
        .filter((s) => s.mode !== 'presence')
        .map(
          (s) => new ModelTrafficSensor(s, doors.get(s.doorId ?? '')!, model.noise.traffic, model.seed, model.startMs),
        ),
    };
  });
  return (step, world) => {
    const out: SensorPacket[] = [];
    for (const f of floors) {
      if (f.presence.length > 0) {
        const people = world.peopleOnFloor(f.floorId);
        for (const s of f.presence) out.push(...[s.sample(step.atMs, people)].filter((p) => p !== null));
      }
      for (const s of f.traffic) out.push(...[s.sample(step.atMs, step.crossings)].filter((p) => p !== null));
    }
    return out;
  };
}
