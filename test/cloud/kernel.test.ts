import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FastPipeline } from '../../src/cloud/kernel/fast-pipeline.js';
import { WireError, WireScanner, type ScanVisitor } from '../../src/cloud/kernel/wire-scan.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import { buildRegistry } from '../../src/cloud/registry.js';
import { SqliteStore } from '../../src/cloud/store/sqlite-store.js';
import { VirtualClock } from '../../src/core/clock.js';
import type { Vec2 } from '../../src/core/geometry.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';
import { HIVE_SERIAL, presenceAt, SENSOR_PA, SENSOR_PB, SENSOR_T, T0, tinyModel, trafficAt } from './fixture.js';

const point = fc.tuple(fc.double({ min: 3, max: 16, noNaN: true }), fc.double({ min: 1, max: 9, noNaN: true })) as fc.Arbitrary<Vec2>;
const packet = fc.oneof(
  fc.record({ s: fc.constantFrom(SENSOR_PA, SENSOR_PB), tick: fc.integer({ min: 0, max: 179 }), pts: fc.array(point, { maxLength: 4 }) }).map(({ s, tick, pts }) => presenceAt(s, T0 + tick * 1000, pts)),
  fc.record({ tick: fc.integer({ min: 0, max: 179 }), i: fc.nat(3), o: fc.nat(3) }).map(({ tick, i, o }) => trafficAt(SENSOR_T, T0 + tick * 1000, i, o)),
);

/** Keeps the first packet per (sensor, instant): the aggregator and the kernel agree only on consistent input. */
function consistent(packets: WirePacket[]): WirePacket[] {
  const seen = new Set<string>();
  return packets.filter((p) => !seen.has(`${p.sensorMac}|${p.sensedAtMs}`) && seen.add(`${p.sensorMac}|${p.sensedAtMs}`) !== undefined);
}

describe('fast pipeline kernel', () => {
  it('computes the same per-minute presence rows as the store-backed pipeline, overlap merging included (seed 42)', () => {
    fc.assert(
      fc.property(fc.array(packet, { minLength: 1, maxLength: 120 }), fc.integer({ min: 1, max: 30 }), (raw, perBatch) => {
        const packets = consistent(raw);
        const batches: UplinkBatch[] = [];
        for (let i = 0; i < packets.length; i += perBatch) batches.push({ hiveSerial: HIVE_SERIAL, seq: batches.length + 1, sentAtMs: T0, packets: packets.slice(i, i + perBatch) });
        const model = tinyModel();
        const registry = buildRegistry(model);
        const store = new SqliteStore(':memory:');
        const slow = new CloudPipeline({ registry, store, clock: new VirtualClock(T0), lookbackMs: 0 });
        const fast = new FastPipeline(model, registry);
        for (const b of batches) {
          const bytes = encodeUplink(b);
          slow.handleMessage(uplinkTopic(HIVE_SERIAL), bytes);
          fast.ingest(uplinkTopic(HIVE_SERIAL), bytes);
          fast.ingest(uplinkTopic(HIVE_SERIAL), bytes); // a redelivery changes nothing
        }
        slow.finish();
        const rows = fast.finaliseBefore(Infinity);
        const stored = registry.presenceSpaceIds().flatMap((id) => store.presenceMinutes(id));
        const key = (r: { spaceId: string; minuteMs: number }): string => `${r.minuteMs}|${r.spaceId}`;
        expect([...rows].sort((a, b) => (key(a) < key(b) ? -1 : 1))).toEqual([...stored].sort((a, b) => (key(a) < key(b) ? -1 : 1)));
        expect(fast.counters.duplicateBatches).toBe(batches.length);
        store.close();
      }),
      { seed: 42, numRuns: 60 },
    );
  });

  it('throws WireError on truncated or garbage bytes instead of reading past them', () => {
    const visitor: ScanVisitor = { header() {}, presenceStart() {}, point() {}, presenceEnd() {}, traffic() {} };
    const good = encodeUplink({ hiveSerial: HIVE_SERIAL, seq: 1, sentAtMs: T0, packets: [presenceAt(SENSOR_PA, T0, [[5, 5]])] });
    const scanner = new WireScanner();
    for (let cut = 1; cut < good.length; cut++) {
      try {
        scanner.scan(good.subarray(0, cut), visitor);
      } catch (err) {
        expect(err).toBeInstanceOf(WireError);
      }
    }
    expect(() => scanner.scan(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), visitor)).toThrow(WireError);
  });
});
