import fc from 'fast-check';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { describe, expect, it } from 'vitest';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import { asyncStore } from '../../src/store/sqlite-async.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { VirtualClock } from '../../src/core/clock.js';
import type { Vec2 } from '../../src/core/geometry.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import {
  FLOOR,
  HIVE_SERIAL,
  presenceAt,
  ROOM_A,
  ROOM_B,
  SENSOR_PA,
  SENSOR_PB,
  SENSOR_T,
  T0,
  tinyModel,
  trafficAt,
  ZONE_A1,
} from './fixture.js';

const MIN = 60_000;

function setup(model: ScenarioModel = tinyModel(), lookbackMs = 5 * MIN) {
  const store = new SqliteStore(':memory:');
  const clock = new VirtualClock(T0);
  const pipeline = new CloudPipeline({
    catalogue: catalogueFromScenario(model),
    tickMs: model.tickMs,
    store: asyncStore(store),
    clock,
    lookbackMs,
  });
  const send = (b: UplinkBatch) => pipeline.handleMessage(uplinkTopic(b.hiveSerial), encodeUplink(b));
  return { store, clock, pipeline, send };
}

const batch = (seq: number, packets: WirePacket[], hiveSerial = HIVE_SERIAL): UplinkBatch => ({
  hiveSerial,
  seq,
  sentAtMs: T0,
  packets,
});

describe('cloud pipeline', () => {
  it('stores a batch, acks it and finalises its minute into the store', async () => {
    const { store, clock, pipeline, send } = setup();
    clock.advanceTo(T0 + 2000);
    const ack = await send(
      batch(1, [
        presenceAt(SENSOR_PA, T0, [[9.5, 5]]),
        presenceAt(SENSOR_PB, T0, [[9.5, 5]]),
        trafficAt(SENSOR_T, T0 + 10_000, 2, 1),
      ]),
    );
    expect(ack).toEqual({ hiveSerial: HIVE_SERIAL, ackedSeq: 1, ackedAtMs: T0 + 2000 });
    await pipeline.finish();
    expect(store.presenceMinutes(ROOM_A)).toEqual([{ spaceId: ROOM_A, minuteMs: T0, value: 1, samples: 1 }]);
    expect(store.presenceMinutes(ROOM_B)).toEqual([{ spaceId: ROOM_B, minuteMs: T0, value: 0, samples: 1 }]);
    expect(store.presenceMinutes(ZONE_A1)[0]?.value).toBe(1);
    expect(store.presenceMinutes(FLOOR)[0]?.value).toBe(1);
    expect(store.trafficMinutes(SENSOR_T.id)).toEqual([{ sensorId: SENSOR_T.id, minuteMs: T0, in: 2, out: 1 }]);
    for (const every of ['5m', '15m', '30m', '1h'] as const)
      expect(store.presenceSeries(ROOM_A, every, T0 - 60 * MIN, T0 + 60 * MIN)).toEqual([{ bucketMs: T0, value: 1 }]);
    expect(store.presenceSeries(ROOM_A, '1d', T0 - 24 * 60 * MIN, T0 + 60 * MIN)).toEqual([
      { bucketMs: Date.UTC(2026, 2, 2), value: 1 },
    ]);
    for (const every of ['5m', '1h'] as const)
      expect(store.trafficSeries(SENSOR_T.id, every, T0 - 60 * MIN, T0 + 60 * MIN)).toEqual([
        { bucketMs: T0, in: 2, out: 1 },
      ]);
    expect(pipeline.counters()).toEqual({
      batchesReceived: 1,
      batchesProcessed: 1,
      duplicateBatches: 0,
      packetsProcessed: 3,
      packetsStoredBefore: 0,
      deadLettered: 0,
      eventsEmitted: 8, // 4 current counts (one instant) + 4 _1M values
      lateInWindow: 0,
      lateBeyondWindow: 0,
    });
    expect(pipeline.latenciesMs().toArrays()).toEqual({
      values: Float64Array.from([2000, -8000]),
      counts: Float64Array.from([2, 1]),
    });
  });

  it('acks the highest contiguous sequence number, so a gap holds the ack back', async () => {
    const { send } = setup();
    expect((await send(batch(1, [])))?.ackedSeq).toBe(1);
    expect((await send(batch(3, [])))?.ackedSeq).toBe(1);
    expect((await send(batch(4, [])))?.ackedSeq).toBe(1);
    expect((await send(batch(2, [])))?.ackedSeq).toBe(4);
  });

  it('re-acks a duplicate batch without processing it again', async () => {
    const { store, pipeline, send } = setup();
    const b = batch(1, [presenceAt(SENSOR_PA, T0, [[5, 5]]), trafficAt(SENSOR_T, T0 + 5000, 1, 0)]);
    await send(b);
    expect((await send(b))?.ackedSeq).toBe(1);
    await pipeline.finish();
    expect(pipeline.counters()).toMatchObject({
      batchesReceived: 2,
      batchesProcessed: 1,
      duplicateBatches: 1,
      packetsProcessed: 2,
    });
    expect(store.presenceMinutes(ROOM_A)[0]).toMatchObject({ value: 1, samples: 1 });
    expect(store.trafficMinutes(SENSOR_T.id)[0]).toMatchObject({ in: 1, out: 0 });
  });

  it('dead-letters garbage, unknown hives and unknown sensors without acking rejected messages', async () => {
    const { store, pipeline, send } = setup();
    expect(
      await pipeline.handleMessage(uplinkTopic(HIVE_SERIAL), new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f])),
    ).toBeNull();
    expect(await send(batch(1, [], 'HV_NOBODY'))).toBeNull();
    const ack = await send(
      batch(1, [{ kind: 'presence', sensorMac: '00-17-0d-00-00-de-ad-00', sensedAtMs: T0, detections: [] }]),
    );
    expect(ack?.ackedSeq).toBe(1);
    expect(store.deadLetters().map((d) => d.reason)).toEqual(['DECODE_FAILED', 'UNKNOWN_HIVE', 'UNKNOWN_SENSOR']);
    expect(pipeline.counters()).toMatchObject({
      batchesReceived: 3,
      batchesProcessed: 1,
      deadLettered: 3,
      packetsProcessed: 0,
    });
  });

  it('writes a minute once it is complete and keeps revising it until its end is lookbackMs behind', async () => {
    const { store, pipeline, send } = setup();
    await send(batch(1, [presenceAt(SENSOR_PA, T0 + 30_000, [[5, 5]])]));
    await pipeline.advance(T0 + MIN - 1);
    expect(store.presenceMinutes(ROOM_A)).toEqual([]);
    await pipeline.advance(T0 + MIN);
    expect(store.presenceMinutes(ROOM_A)).toEqual([{ spaceId: ROOM_A, minuteMs: T0, value: 1, samples: 1 }]);
    await send(
      batch(2, [
        presenceAt(SENSOR_PA, T0 + 31_000, [
          [5, 5],
          [6, 5],
        ]),
        presenceAt(SENSOR_PA, T0 + 32_000, [
          [5, 5],
          [6, 5],
        ]),
      ]),
    );
    await pipeline.advance(T0 + 2 * MIN);
    expect(store.presenceMinutes(ROOM_A)[0]).toMatchObject({ value: 2, samples: 3 });
    expect(pipeline.counters()).toMatchObject({ lateInWindow: 2, lateBeyondWindow: 0 });
    const roomEvents = () => store.events().filter((e) => e.spaceId === ROOM_A);
    expect(roomEvents().map((e) => [e.type, e.minuteMs, e.value, e.revision])).toEqual([
      ['ROOM_OCCUPANCY', T0 + 30_000, 1, 0], // the current count, at the instant it was sensed
      ['ROOM_OCCUPANCY_1M', T0, 1, 0],
      ['ROOM_OCCUPANCY_1M', T0, 2, 1],
    ]);
    // Ids are derived from type, space, instant and revision: distinct, and equal in every run.
    expect(new Set(roomEvents().map((e) => e.eventId)).size).toBe(3);
    expect(roomEvents()[1]?.eventId).toMatch(/^event_[0-9a-f]{24}$/);
    await pipeline.advance(T0 + MIN + 5 * MIN);
    await send(batch(3, [presenceAt(SENSOR_PA, T0 + 33_000, [])]));
    expect(pipeline.counters()).toMatchObject({ lateBeyondWindow: 1 });
    // The recompute at T0 + 6 min sends minute T0 once more (rule 1) before finalising it.
    expect(
      roomEvents()
        .slice(3)
        .map((e) => [e.type, e.minuteMs, e.value, e.revision]),
    ).toEqual([['ROOM_OCCUPANCY_1M', T0, 2, 2]]);
    await pipeline.advance(T0 + 7 * MIN);
    expect(store.presenceMinutes(ROOM_A)[0]).toMatchObject({ value: 1.5, samples: 4 });
    // Late data beyond the window revises the stored minute, with no event.
    expect(roomEvents()).toHaveLength(4);
  });

  it("sends each minute of the look-back window again at every minute's recompute: same timestamp, new id, the recomputed value (spec §6 rule 1)", async () => {
    const { store, pipeline, send } = setup();
    await send(batch(1, [presenceAt(SENSOR_PA, T0 + 30_000, [[5, 5]])]));
    for (let k = 1; k <= 8; k++) {
      if (k === 3)
        await send(
          batch(2, [
            presenceAt(SENSOR_PA, T0 + 31_000, [
              [5, 5],
              [6, 5],
            ]),
            presenceAt(SENSOR_PA, T0 + 32_000, [
              [5, 5],
              [6, 5],
            ]),
          ]),
        );
      await pipeline.advance(T0 + k * MIN);
    }
    const minuteT0 = store
      .events()
      .filter((e) => e.spaceId === ROOM_A && e.type === 'ROOM_OCCUPANCY_1M' && e.minuteMs === T0);
    // First at T0 + 1 min, then at each recompute until the minute leaves the 5-minute window
    // (finalised at T0 + 6 min): late data at T0 + 3 min changes the value from then on.
    expect(minuteT0.map((e) => [e.emittedAtMs - T0, e.value, e.revision])).toEqual([
      [MIN, 1, 0],
      [2 * MIN, 1, 1],
      [3 * MIN, 2, 2],
      [4 * MIN, 2, 3],
      [5 * MIN, 2, 4],
      [6 * MIN, 2, 5],
    ]);
    expect(new Set(minuteT0.map((e) => e.eventId)).size).toBe(6);
    // The same run again gives the same events, ids included.
    const again = setup();
    await again.send(batch(1, [presenceAt(SENSOR_PA, T0 + 30_000, [[5, 5]])]));
    for (let k = 1; k <= 8; k++) {
      if (k === 3)
        await again.send(
          batch(2, [
            presenceAt(SENSOR_PA, T0 + 31_000, [
              [5, 5],
              [6, 5],
            ]),
            presenceAt(SENSOR_PA, T0 + 32_000, [
              [5, 5],
              [6, 5],
            ]),
          ]),
        );
      await again.pipeline.advance(T0 + k * MIN);
    }
    expect(again.store.events()).toEqual(store.events());
  });

  it('emits a current-count event only when a space count changes from one sensing instant to the next', async () => {
    const { store, pipeline, send } = setup();
    const counts = [0, 1, 1, 2, 2, 2, 0];
    await send(
      batch(
        1,
        counts.map((n, k) =>
          presenceAt(
            SENSOR_PA,
            T0 + k * 1000,
            (
              [
                [5, 5],
                [6, 6],
              ] as Vec2[]
            ).slice(0, n),
          ),
        ),
      ),
    );
    await pipeline.advance(T0 + MIN);
    const current = store.events().filter((e) => e.spaceId === ROOM_A && e.type === 'ROOM_OCCUPANCY');
    expect(current.map((e) => [e.minuteMs - T0, e.value])).toEqual([
      [0, 0],
      [1000, 1],
      [3000, 2],
      [6000, 0],
    ]);
    expect(
      store
        .events()
        .filter((e) => e.type === 'FLOOR_OCCUPANCY')
        .map((e) => e.value),
    ).toEqual([0, 1, 2, 0]);
  });

  it('revises a finalised minute when late data for it arrives', async () => {
    const { store, pipeline, send } = setup(tinyModel(), 0);
    await send(batch(1, [presenceAt(SENSOR_PA, T0, [[5, 5]]), trafficAt(SENSOR_T, T0 + 10_000, 1, 0)]));
    await pipeline.advance(T0 + 10 * MIN);
    expect(store.presenceMinutes(ROOM_A)[0]).toMatchObject({ value: 1, samples: 1 });
    await send(
      batch(2, [
        presenceAt(SENSOR_PA, T0 + 1000, [
          [5, 5],
          [6, 6],
        ]),
        presenceAt(SENSOR_PA, T0 + 2000, [
          [5, 5],
          [6, 6],
        ]),
        trafficAt(SENSOR_T, T0 + 20_000, 0, 1),
      ]),
    );
    await pipeline.advance(T0 + 10 * MIN);
    expect(store.presenceMinutes(ROOM_A)).toEqual([{ spaceId: ROOM_A, minuteMs: T0, value: 2, samples: 3 }]);
    expect(store.trafficMinutes(SENSOR_T.id)).toEqual([{ sensorId: SENSOR_T.id, minuteMs: T0, in: 1, out: 1 }]);
  });
});

describe('order independence', () => {
  // Two hives: sensor PB moves to a second hive so batches from both interleave.
  const model = tinyModel();
  model.hives.push({ ...model.hives[0]!, id: 'hive_2', serial: 'HV0000000002' });
  model.sensors = model.sensors.map((s) => (s.id === SENSOR_PB.id ? { ...s, hiveId: 'hive_2' } : s));
  const HIVE2 = 'HV0000000002';
  const STEP_MS = 5000;
  const INSTANTS = 36; // 3 minutes

  /** One batch per hive per 20 s of sensing, seq from 1. */
  function batchesFor(people: readonly (readonly Vec2[])[]): UplinkBatch[] {
    const out: UplinkBatch[] = [];
    const perBatch = 4;
    for (let b = 0; b * perBatch < INSTANTS; b++) {
      const instants = people
        .slice(b * perBatch, (b + 1) * perBatch)
        .map((ps, k) => ({ at: T0 + (b * perBatch + k) * STEP_MS, ps }));
      const seen = (x: number, lo: number, hi: number) => x >= lo && x < hi;
      out.push(
        batch(b + 1, [
          ...instants.map(({ at, ps }) =>
            presenceAt(
              SENSOR_PA,
              at,
              ps.filter(([x]) => seen(x, 4, 10)),
            ),
          ),
          ...instants.map(({ at, ps }) => trafficAt(SENSOR_T, at, ps.length % 2, ps.length >> 1)),
        ]),
      );
      out.push(
        batch(
          b + 1,
          instants.map(({ at, ps }) =>
            presenceAt(
              SENSOR_PB,
              at,
              ps.filter(([x]) => seen(x, 9, 15)),
            ),
          ),
          HIVE2,
        ),
      );
    }
    return out;
  }

  async function runInOrder(batches: readonly UplinkBatch[], advanceAfter: readonly number[]) {
    const { store, clock, pipeline, send } = setup(model, MIN);
    for (const [i, b] of batches.entries()) {
      await send(b);
      const t = advanceAfter[i];
      if (t !== undefined && t > clock.now()) {
        clock.advanceTo(t);
        await pipeline.advance(t);
      }
    }
    await pipeline.finish();
    const ids = [ROOM_A, ROOM_B, ZONE_A1, FLOOR];
    return {
      presence: ids.map((id) => store.presenceMinutes(id)),
      traffic: store.trafficMinutes(SENSOR_T.id),
      duplicates: pipeline.counters().duplicateBatches,
    };
  }

  it('finalises the same minutes whatever order batches of several hives arrive in (seed 42)', async () => {
    const person = fc.tuple(
      fc.double({ min: 0.5, max: 19.5, noNaN: true }),
      fc.double({ min: 0.5, max: 9.5, noNaN: true }),
    );
    const people = fc.array(fc.array(person, { maxLength: 3 }), { minLength: INSTANTS, maxLength: INSTANTS });
    const scenario = people.chain((ps) => {
      const batches = batchesFor(ps);
      return fc.tuple(
        fc.constant(batches),
        fc.shuffledSubarray(batches, { minLength: batches.length, maxLength: batches.length }),
        fc.array(
          fc.integer({ min: 0, max: 6 * MIN }).map((d) => T0 + d),
          { minLength: batches.length, maxLength: batches.length },
        ),
      );
    });
    const prop = fc.asyncProperty(scenario, async ([inOrder, shuffled, advances]) => {
      const expected = await runInOrder(inOrder, []);
      // Arrival with a duplicate thrown in, and the clock advancing (finalising minutes) in between.
      const actual = await runInOrder(
        [...shuffled, shuffled[0]!],
        [...advances].sort((a, b) => a - b),
      );
      expect(actual.presence).toEqual(expected.presence);
      expect(actual.traffic).toEqual(expected.traffic);
      expect(actual.duplicates).toBe(1);
    });
    await fc.assert(prop, { seed: 42, numRuns: 25 });
  });

  it('never changes stored series, rollups or events when batches are redelivered or packets repeated in new batches (seed 42)', async () => {
    const person = fc.tuple(
      fc.double({ min: 0.5, max: 19.5, noNaN: true }),
      fc.double({ min: 0.5, max: 9.5, noNaN: true }),
    );
    const people = fc.array(fc.array(person, { maxLength: 3 }), { minLength: INSTANTS, maxLength: INSTANTS });
    const scenario = people.chain((ps) => {
      const batches = batchesFor(ps);
      return fc.tuple(
        fc.constant(batches),
        fc.array(fc.nat(batches.length - 1), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(batches.length - 1), { maxLength: 3 }),
      );
    });
    const series = (store: SqliteStore) => ({
      minutes: [ROOM_A, ROOM_B, ZONE_A1, FLOOR].map((id) => store.presenceMinutes(id)),
      rollups: [ROOM_A, FLOOR].map((id) => store.presenceSeries(id, '5m', T0 - 60 * MIN, T0 + 60 * MIN)),
      traffic: store.trafficMinutes(SENSOR_T.id),
      events: store.events().map(({ type, spaceId, minuteMs, value }) => ({ type, spaceId, minuteMs, value })),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ([batches, redeliver, repack]) => {
        const once = setup(model, MIN);
        for (const b of batches) await once.send(b);
        await once.pipeline.finish();
        const dup = setup(model, MIN);
        const nextSeq = new Map<string, number>();
        for (const b of batches) nextSeq.set(b.hiveSerial, Math.max(nextSeq.get(b.hiveSerial) ?? 0, b.seq));
        for (const [i, b] of batches.entries()) {
          await dup.send(b);
          for (const k of redeliver.filter((r) => r === i)) await dup.send(batches[k] as UplinkBatch);
        }
        // The same packets again under new sequence numbers (a hive resending after a reboot).
        for (const k of repack) {
          const b = batches[k] as UplinkBatch;
          const seq = (nextSeq.get(b.hiveSerial) ?? 0) + 1;
          nextSeq.set(b.hiveSerial, seq);
          await dup.send({ ...b, seq });
        }
        await dup.pipeline.finish();
        expect(series(dup.store)).toEqual(series(once.store));
      }),
      { seed: 42, numRuns: 25 },
    );
  });
});
