import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StorelessPipeline } from '../oracles/storeless-pipeline.js';
import { inspectUplink } from '../../src/cloud/ingest.js';
import { MacTable } from '../../src/cloud/kernel/mac-table.js';
import { AppError } from '../../src/core/errors.js';
import { PresenceAggregator } from '../oracles/presence-reference.js';
import { buildRegistry } from '../../src/cloud/registry.js';
import type { Vec2 } from '../../src/core/geometry.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import { readUplink, type UplinkVisitor } from '../../src/proto/uplink-decode.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';
import { HIVE_SERIAL, presenceAt, SENSOR_PA, SENSOR_PB, SENSOR_T, T0, tinyModel, trafficAt } from './fixture.js';

const point = fc.tuple(
  fc.double({ min: 3, max: 16, noNaN: true }),
  fc.double({ min: 1, max: 9, noNaN: true }),
) as fc.Arbitrary<Vec2>;
const packet = fc.oneof(
  fc
    .record({
      s: fc.constantFrom(SENSOR_PA, SENSOR_PB),
      tick: fc.integer({ min: 0, max: 179 }),
      pts: fc.array(point, { maxLength: 4 }),
    })
    .map(({ s, tick, pts }) => presenceAt(s, T0 + tick * 1000, pts)),
  fc
    .record({ tick: fc.integer({ min: 0, max: 179 }), i: fc.nat(3), o: fc.nat(3) })
    .map(({ tick, i, o }) => trafficAt(SENSOR_T, T0 + tick * 1000, i, o)),
);

/** Keeps the first packet per (sensor, instant): the aggregator and the kernel agree only on consistent input. */
function consistent(packets: WirePacket[]): WirePacket[] {
  const seen = new Set<string>();
  return packets.filter(
    (p) => !seen.has(`${p.sensorMac}|${p.sensedAtMs}`) && seen.add(`${p.sensorMac}|${p.sensedAtMs}`) !== undefined,
  );
}

describe('fast pipeline kernel', () => {
  it('computes the same per-minute presence rows as the Map-based reference aggregator, overlap merging included (seed 42)', () => {
    fc.assert(
      fc.property(
        fc.array(packet, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 30 }),
        (raw, perBatch) => {
          const packets = consistent(raw);
          const batches: UplinkBatch[] = [];
          for (let i = 0; i < packets.length; i += perBatch)
            batches.push({
              hiveSerial: HIVE_SERIAL,
              seq: batches.length + 1,
              sentAtMs: T0,
              packets: packets.slice(i, i + perBatch),
            });
          const model = tinyModel();
          const registry = buildRegistry(model);
          // The reference: protobufjs decode + inspectUplink + the Map-based aggregator (docs/occupancy.md).
          const reference = new PresenceAggregator(registry);
          const fast = new StorelessPipeline(registry, model.tickMs, model.sites[0]?.timezone ?? 'UTC');
          for (const b of batches) {
            const bytes = encodeUplink(b);
            const v = inspectUplink(registry, { topic: uplinkTopic(HIVE_SERIAL), payload: bytes, receivedAtMs: T0 });
            if (v.kind === 'accepted')
              for (const { sensorId, packet: p } of v.packets)
                if (p.kind === 'presence') reference.add(sensorId, p.sensedAtMs, p.detections);
            fast.ingest(uplinkTopic(HIVE_SERIAL), bytes);
            fast.ingest(uplinkTopic(HIVE_SERIAL), bytes); // a redelivery changes nothing
          }
          const rows = fast.finaliseBefore(Infinity);
          const stored = reference.openMinutes().flatMap((m) => reference.finalise(m));
          const key = (r: { spaceId: string; minuteMs: number }): string => `${r.minuteMs}|${r.spaceId}`;
          expect([...rows].sort((a, b) => (key(a) < key(b) ? -1 : 1))).toEqual(
            [...stored].sort((a, b) => (key(a) < key(b) ? -1 : 1)),
          );
          expect(fast.counters.duplicateBatches).toBe(batches.length);
        },
      ),
      { seed: 42, numRuns: 60 },
    );
  });

  it('throws DECODE_FAILED on truncated or garbage bytes instead of reading past them', () => {
    const visitor: UplinkVisitor = {
      header() {},
      presenceBody() {},
      point() {},
      presence() {},
      bodiless() {},
      traffic() {},
    };
    const good = encodeUplink({
      hiveSerial: HIVE_SERIAL,
      seq: 1,
      sentAtMs: T0,
      packets: [presenceAt(SENSOR_PA, T0, [[5, 5]])],
    });
    for (let cut = 1; cut < good.length; cut++) {
      try {
        readUplink(good.subarray(0, cut), visitor);
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe('DECODE_FAILED');
      }
    }
    expect(() =>
      readUplink(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), visitor),
    ).toThrow(AppError);
  });

  it('reads detections whose zero coordinates the encoder left out as well as the usual layout', () => {
    const points: Array<[number, number]> = [];
    const visitor: UplinkVisitor = {
      header() {},
      presenceBody() {},
      point: (x, y) => void points.push([x, y]),
      presence() {},
      bodiless() {},
      traffic() {},
    };
    const packet = {
      kind: 'presence' as const,
      sensorMac: SENSOR_PA.mac,
      sensedAtMs: T0,
      detections: [
        [0, 0.5],
        [0.25, 0],
        [0.5, 0.75],
        [0, 0],
      ] as Array<[number, number]>,
    };
    readUplink(encodeUplink({ hiveSerial: HIVE_SERIAL, seq: 1, sentAtMs: T0, packets: [packet] }), visitor);
    expect(points).toEqual(packet.detections);
  });

  it('finds sensors by MAC case-insensitively, interns a new spelling once and never an unknown MAC', () => {
    const table = new MacTable(['00-17-0d-00-00-00-00-0a', '00-17-0D-00-00-00-00-0B', 'ab']);
    const find = (mac: string): number => {
      const b = new TextEncoder().encode(`xx${mac}`);
      return table.lookup(b, new DataView(b.buffer), 2, b.length);
    };
    for (let round = 0; round < 2; round++) {
      expect(find('00-17-0d-00-00-00-00-0a')).toBe(0);
      expect(find('00-17-0D-00-00-00-00-0A')).toBe(0);
      expect(find('00-17-0d-00-00-00-00-0b')).toBe(1);
      expect(find('AB')).toBe(2);
      expect(find('00-17-0d-00-00-00-00-0c')).toBe(-1);
      expect(find('00-17-0d-00-00-00-00-0a0')).toBe(-1);
      expect(find('')).toBe(-1);
    }
  });

  it('agrees with a case-insensitive Map on every spelling, over tables larger than their first byte store (seed 1414)', () => {
    const mac = fc
      .array(fc.constantFrom(...'0123456789abcdefABCDEF-:'), { minLength: 0, maxLength: 30 })
      .map((cs) => cs.join(''));
    fc.assert(
      fc.property(
        fc.uniqueArray(mac, { minLength: 1, maxLength: 300, selector: (m) => m.toLowerCase() }),
        fc.array(fc.tuple(fc.nat(), fc.boolean(), fc.boolean())),
        (macs, probes) => {
          const table = new MacTable(macs);
          const index = new Map(macs.map((m, i) => [m.toLowerCase(), i] as const));
          for (const [pick, upper, unknown] of probes) {
            const base = macs[pick % macs.length] as string;
            const probe = unknown ? `${base}z` : upper ? base.toUpperCase() : base;
            const b = new TextEncoder().encode(`..${probe}`);
            expect(table.lookup(b, new DataView(b.buffer), 2, b.length)).toBe(index.get(probe.toLowerCase()) ?? -1);
          }
        },
      ),
      { seed: 1414, numRuns: 200 },
    );
  });
});
