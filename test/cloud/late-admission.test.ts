import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import {
  LateAdmission,
  LATE_MINUTES_PER_BATCH,
  LATE_MINUTES_PER_HIVE_HOUR,
  type LatePackets,
} from '../../src/cloud/late-admission.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import { asyncStore } from '../../src/store/sqlite-async.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { VirtualClock } from '../../src/core/clock.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { decodeUplink, encodeUplink } from '../../src/proto/codec.js';
import type { WirePacket } from '../../src/proto/messages.js';
import { HIVE_SERIAL, presenceAt, ROOM_A, SENSOR_PA, T0, tinyModel } from './fixture.js';

const MIN = 60_000;
const minuteOf = (t: number): number => Math.floor(t / MIN) * MIN;

/** Presence packets (kind 1) of a valid sensor, one per instant. */
function packets(instants: readonly number[]): LatePackets {
  return { count: instants.length, sensor: instants.map(() => 0), kind: instants.map(() => 1), sensedAt: instants };
}

describe('late admission', () => {
  it('admits at most LATE_MINUTES_PER_BATCH distinct past minutes of a batch, the first in packet order', () => {
    const admission = new LateAdmission();
    const instants = Array.from({ length: 40 }, (_, i) => T0 - (i + 10) * MIN);
    const refused = admission.refuse(HIVE_SERIAL, T0, packets(instants), minuteOf, () => true);
    expect(refused.size).toBe(40 - LATE_MINUTES_PER_BATCH);
    expect(refused.has(`${T0 - 10 * MIN}|1`)).toBe(false);
    expect(refused.has(`${T0 - 49 * MIN}|1`)).toBe(true);
  });

  it('counts a minute once however many packets fall in it, and never charges an open minute', () => {
    const admission = new LateAdmission();
    const instants = Array.from({ length: 400 }, (_, i) => T0 - 10 * MIN + (i % 60) * 1000);
    expect(admission.refuse(HIVE_SERIAL, T0, packets(instants), minuteOf, () => true).size).toBe(0);
    expect(
      admission.refuse(
        HIVE_SERIAL,
        T0,
        packets(Array.from({ length: 400 }, (_, i) => T0 - i * MIN)),
        minuteOf,
        () => false,
      ).size,
    ).toBe(0);
  });

  it('spends a hive budget of LATE_MINUTES_PER_HIVE_HOUR per clock hour, per hive, renewed the next hour', () => {
    const admission = new LateAdmission();
    const batches = LATE_MINUTES_PER_HIVE_HOUR / LATE_MINUTES_PER_BATCH;
    let minute = 0;
    const nextBatch = (): LatePackets =>
      packets(Array.from({ length: LATE_MINUTES_PER_BATCH }, () => T0 - ++minute * MIN));
    for (let b = 0; b < batches; b++)
      expect(admission.refuse(HIVE_SERIAL, T0, nextBatch(), minuteOf, () => true).size).toBe(0);
    expect(admission.refuse(HIVE_SERIAL, T0 + 1000, nextBatch(), minuteOf, () => true).size).toBe(
      LATE_MINUTES_PER_BATCH,
    );
    expect(admission.refuse('HV_OTHER', T0 + 1000, nextBatch(), minuteOf, () => true).size).toBe(0);
    expect(admission.refuse(HIVE_SERIAL, T0 + 60 * MIN, nextBatch(), minuteOf, () => true).size).toBe(0);
  });

  it('dead-letters the packets beyond the budget with a reason, stores only what it admitted, and recovery agrees', async () => {
    const sync = new SqliteStore(':memory:');
    const clock = new VirtualClock(T0 + 120 * MIN);
    const opts = {
      catalogue: catalogueFromScenario(tinyModel()),
      tickMs: 1000,
      store: asyncStore(sync),
      clock,
      lookbackMs: 5 * MIN,
    };
    const pipeline = new CloudPipeline(opts);
    await pipeline.advance(T0 + 120 * MIN);
    // 40 packets, each in its own finalised minute, plus one of an unknown sensor (its own reason).
    const late: WirePacket[] = Array.from({ length: 40 }, (_, i) => presenceAt(SENSOR_PA, T0 + i * MIN, [[7, 5]]));
    late.push({ kind: 'presence', sensorMac: '00-17-0d-00-00-de-ad-00', sensedAtMs: T0, detections: [] });
    const ack = await pipeline.handleMessage(
      uplinkTopic(HIVE_SERIAL),
      encodeUplink({ hiveSerial: HIVE_SERIAL, seq: 1, sentAtMs: T0, packets: late }),
    );
    expect(ack?.ackedSeq).toBe(1);
    await pipeline.advance(T0 + 121 * MIN);
    const reasons = sync.deadLetters().map((d) => d.reason);
    expect(reasons.filter((r) => r === 'LATE_BEYOND_BUDGET')).toHaveLength(40 - LATE_MINUTES_PER_BATCH);
    expect(reasons.filter((r) => r === 'UNKNOWN_SENSOR')).toHaveLength(1);
    expect(sync.deadLetters().find((d) => d.reason === 'LATE_BEYOND_BUDGET')?.message).toMatch(
      /packets\[16\]: minute .* budget of late minutes/,
    );
    // The ledger: every packet sent is processed or dead-lettered.
    const c = pipeline.counters();
    expect(c.packetsProcessed + c.deadLettered).toBe(late.length);
    expect(c.packetsProcessed).toBe(LATE_MINUTES_PER_BATCH);
    expect(sync.presenceMinutes(ROOM_A).map((m) => m.minuteMs)).toEqual(
      Array.from({ length: LATE_MINUTES_PER_BATCH }, (_, i) => T0 + i * MIN),
    );
    // What recovery and reopening re-read: the admitted packets (and the unknown sensor's, refused again on reading).
    const stored = sync.payloadsSensedIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    expect(stored.map((p) => decodeUplink(p.payload).packets.length)).toEqual([LATE_MINUTES_PER_BATCH + 1]);
  });
});
