import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PacketKind, ReadStatus, UplinkReader } from '../../../src/cloud/kernel/uplink-reader.js';
import { buildRegistry } from '../../../src/cloud/registry.js';
import type { Vec2 } from '../../../src/core/geometry.js';
import { decodeUplink, encodeUplink } from '../../../src/proto/codec.js';
import { readUplink, type UplinkVisitor } from '../../../src/proto/uplink-decode.js';
import { WireScanner, type ScanVisitor } from '../../oracles/wire-scan.js';
import type { UplinkBatch, WirePacket } from '../../../src/proto/messages.js';
import { HIVE_SERIAL, presenceAt, SENSOR_PA, SENSOR_PB, SENSOR_T, T0, tinyModel, trafficAt } from '../fixture.js';

/**
 * The hot path (the uplink reader over the one decoder's walk, `readUplink`) acks and stores
 * what it reads as Clean without building the batch; the slow path and every other reader use
 * `decodeUplink`, the same walk into objects. They must agree: whatever the reader calls Clean,
 * the decoder accepts and reads as the same header and packets; whatever the decoder refuses,
 * the reader leaves to the slow path (which dead-letters it). And the walk reads what the
 * hot path's previous scanner (test/oracles/wire-scan.ts) read wherever that one read anything.
 * 10,000 mutated uplinks (bit flips, set, inserted, deleted and duplicated bytes,
 * truncations) from a fixed seed; a failure prints the counterexample.
 */
const SEED = 20_261_124;

const point = fc.tuple(
  fc.double({ min: 3, max: 16, noNaN: true }),
  fc.double({ min: 1, max: 9, noNaN: true }),
) as fc.Arbitrary<Vec2>;
const packet: fc.Arbitrary<WirePacket> = fc.oneof(
  fc
    .record({
      s: fc.constantFrom(SENSOR_PA, SENSOR_PB),
      tick: fc.integer({ min: 0, max: 179 }),
      pts: fc.array(point, { maxLength: 3 }),
    })
    .map(({ s, tick, pts }) => presenceAt(s, T0 + tick * 1000, pts)),
  fc
    .record({ tick: fc.integer({ min: 0, max: 179 }), i: fc.nat(3), o: fc.nat(3) })
    .map(({ tick, i, o }) => trafficAt(SENSOR_T, T0 + tick * 1000, i, o)),
);
const batch: fc.Arbitrary<UplinkBatch> = fc.record({
  hiveSerial: fc.constant(HIVE_SERIAL),
  seq: fc.integer({ min: 1, max: 2 ** 40 }),
  sentAtMs: fc.constant(T0 + 200_000),
  packets: fc.array(packet, { minLength: 1, maxLength: 4 }),
});

type Mutation = {
  kind: 'flip' | 'set' | 'insert' | 'delete' | 'truncate' | 'duplicate';
  at: number;
  value: number;
  len: number;
};
const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('flip', 'set', 'insert', 'delete', 'truncate', 'duplicate'),
  at: fc.nat(),
  value: fc.integer({ min: 0, max: 255 }),
  len: fc.integer({ min: 1, max: 12 }),
});

function mutate(bytes: Uint8Array, ms: readonly Mutation[]): Uint8Array {
  let b = Array.from(bytes);
  for (const m of ms) {
    if (b.length === 0) break;
    const at = m.at % b.length;
    if (m.kind === 'flip') b[at] = (b[at] as number) ^ (1 << (m.value % 8));
    else if (m.kind === 'set') b[at] = m.value;
    else if (m.kind === 'insert') b.splice(at, 0, m.value);
    else if (m.kind === 'delete') b.splice(at, m.len);
    else if (m.kind === 'truncate') b = b.slice(0, at);
    else b.splice(at, 0, ...b.slice(at, at + m.len));
  }
  return Uint8Array.from(b);
}

const model = tinyModel();
const registry = buildRegistry(model);

type View = { seq: number; sentAtMs: number; packets: WirePacket[] };

/** What the reader read, in the decoder's terms: sensors by id (MACs match case-insensitively), no interval (the reader does not keep it). */
function readerView(r: UplinkReader): View {
  const packets: WirePacket[] = [];
  for (let i = 0; i < r.count; i++) {
    const sensorMac = r.sensorIds[r.sensor[i] as number] as string;
    const sensedAtMs = r.sensedAt[i] as number;
    if (r.kind[i] === PacketKind.Presence) {
      const detections: Vec2[] = [];
      for (let d = r.detStart[i] as number; d < (r.detStart[i + 1] as number); d++)
        detections.push([r.xs[d] as number, r.ys[d] as number]);
      packets.push({ kind: 'presence', sensorMac, sensedAtMs, detections });
    } else
      packets.push({
        kind: 'traffic',
        sensorMac,
        sensedAtMs,
        intervalMs: 0,
        in: r.inCount[i] as number,
        out: r.outCount[i] as number,
      });
  }
  return { seq: r.seq, sentAtMs: r.sentAtMs, packets };
}

function decoderView(b: UplinkBatch): View {
  const packets = b.packets.map((p): WirePacket => {
    const sensorMac = registry.sensorByMac(p.sensorMac)?.id ?? `unknown ${p.sensorMac}`;
    return p.kind === 'traffic'
      ? { ...p, sensorMac, intervalMs: 0 }
      : { ...p, sensorMac, detections: p.detections.map(([x, y]) => [x, y] as Vec2) };
  });
  return { seq: b.seq, sentAtMs: b.sentAtMs, packets };
}

/** What a walk told its visitor, byte spans as hex: the same record for the walk and the old scanner. */
interface Walked {
  header: unknown[];
  packets: unknown[];
}

function walkedBy(bytes: Uint8Array): { walk: Walked; visitor: UplinkVisitor; scanVisitor: ScanVisitor } {
  const walk: Walked = { header: [], packets: [] };
  const hex = (s: number, e: number): string => Buffer.from(bytes.subarray(s, e)).toString('hex');
  let points: number[][] = [];
  const visitor: UplinkVisitor = {
    header: (s, e, seq, sent) => void (walk.header = [hex(s, e), seq, sent]),
    presenceBody: () => void (points = []),
    point: (x, y) => void points.push([x, y]),
    presence: (s, e, t) => {
      walk.packets.push(['presence', hex(s, e), t, points]);
      points = [];
    },
    bodiless: (s, e, t) => void walk.packets.push(['bodiless', hex(s, e), t]),
    traffic: (s, e, t, interval, i, o) => {
      walk.packets.push(['traffic', hex(s, e), t, interval, i, o]);
      points = [];
    },
  };
  const scanVisitor: ScanVisitor = {
    header: (seq, sent, s, e) => void (walk.header = [hex(s, e), seq, sent]),
    presenceStart: (s, e, t) => {
      points = [];
      walk.packets.push(['presence', hex(s, e), t, points]);
    },
    point: (x, y) => void points.push([x, y]),
    presenceEnd: () => undefined,
    traffic: (s, e, t, interval, i, o) => void walk.packets.push(['traffic', hex(s, e), t, interval, i, o]),
  };
  return { walk, visitor, scanVisitor };
}

describe('wire scanner and decoder agree', () => {
  it(`reads every uplink the fast path calls Clean exactly as decodeUplink does, over 10,000 mutated uplinks (fast-check seed ${SEED})`, () => {
    const reader = new UplinkReader(registry);
    const hive = reader.hiveOfTopic(`occusim/v1/hives/${HIVE_SERIAL}/uplink`);
    expect(hive).toBeGreaterThanOrEqual(0);
    fc.assert(
      fc.property(batch, fc.array(mutation, { minLength: 1, maxLength: 3 }), (b, ms) => {
        const bytes = mutate(encodeUplink(b), ms);
        if (reader.read(hive, bytes) !== ReadStatus.Clean) return;
        let decoded: UplinkBatch;
        try {
          decoded = decodeUplink(bytes);
        } catch (err) {
          throw new Error(
            `the fast path accepted bytes the decoder refuses (${(err as Error).message}): ${Buffer.from(bytes).toString('hex')}`,
          );
        }
        expect(decoded.hiveSerial).toBe(HIVE_SERIAL);
        expect(readerView(reader)).toEqual(decoderView(decoded));
      }),
      { seed: SEED, numRuns: 10_000 },
    );
  });

  it(`reads what the previous scanner read, and leaves what the decoder refuses to the slow path, over 10,000 mutated uplinks (fast-check seed ${SEED})`, () => {
    const reader = new UplinkReader(registry);
    const hive = reader.hiveOfTopic(`occusim/v1/hives/${HIVE_SERIAL}/uplink`);
    const scanner = new WireScanner();
    let scanned = 0;
    let refused = 0;
    fc.assert(
      fc.property(batch, fc.array(mutation, { minLength: 1, maxLength: 3 }), (b, ms) => {
        const bytes = Buffer.from(mutate(encodeUplink(b), ms));
        let decoded = true;
        try {
          decodeUplink(bytes);
        } catch {
          decoded = false;
        }
        const status = reader.read(hive, bytes);
        const live = walkedBy(bytes);
        const old = walkedBy(bytes);
        let oldRead = true;
        try {
          scanner.scan(bytes, old.scanVisitor);
        } catch {
          oldRead = false;
        }
        if (!decoded) {
          refused++;
          expect(status).toBe(ReadStatus.Message);
          expect(oldRead).toBe(false);
          expect(() => readUplink(bytes, live.visitor)).toThrow();
          return;
        }
        if (!oldRead) return;
        scanned++;
        readUplink(bytes, live.visitor);
        expect(live.walk).toEqual(old.walk);
      }),
      { seed: SEED, numRuns: 10_000 },
    );
    // Both sides of the property were exercised.
    expect(scanned).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });

  it('leaves a batch over the 500-packet limit to the slow path, which refuses it', () => {
    const reader = new UplinkReader(registry);
    const hive = reader.hiveOfTopic(`occusim/v1/hives/${HIVE_SERIAL}/uplink`);
    const bytes = encodeUplink({
      hiveSerial: HIVE_SERIAL,
      seq: 1,
      sentAtMs: T0,
      packets: Array.from({ length: 501 }, (_, i) => trafficAt(SENSOR_T, T0 + i, 0, 0)),
    });
    expect(reader.read(hive, bytes)).toBe(ReadStatus.Message);
  });
});
