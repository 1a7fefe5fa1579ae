import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rawUplinkReflect } from '../oracles/uplink-raw-reflect.js';
import { encodeUplinkReflect } from '../oracles/uplink-reflect.js';
import { packetsKey, rawUplink } from '../../src/capture/rules.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';

/**
 * The conformance checker's and the recorder's reading of an uplink (`rawUplink`, over the one
 * uplink decoder) against protobufjs reflection's toObject, which they read before: the same
 * fields in the same key order (retransmissions are compared as JSON, `packetsKey`), packets
 * without a body and packets with both bodies included, and the same complaint text for bytes
 * that do not decode. Each input as a Buffer and as a plain Uint8Array.
 */
const SEED = 20_261_128;
console.log(`capture rules properties: fast-check seed ${String(SEED)}`);

function expectAsReflection(bytes: Uint8Array): void {
  for (const input of [Buffer.from(bytes), Uint8Array.from(bytes)]) {
    const live = rawUplink(input);
    const before = rawUplinkReflect(input);
    expect(live).toEqual(before);
    expect(JSON.stringify(live)).toBe(JSON.stringify(before));
    if (typeof live !== 'string' && typeof before !== 'string')
      expect(packetsKey(live.packets)).toBe(packetsKey(before.packets));
  }
}

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.constantFrom('', '00-17-0d-00-00-aa-bb-cc', '\ud800é'),
);
const count = fc.oneof(fc.nat(10), fc.nat(), fc.constantFrom(2 ** 32, 2 ** 53, 2 ** 64));
const coord = fc.oneof(fc.float({ min: 0, max: 16, noNaN: true }).map(Number), fc.double());
const packet: fc.Arbitrary<WirePacket> = fc.oneof(
  fc.record({
    kind: fc.constant('presence' as const),
    sensorMac: text,
    sensedAtMs: count,
    detections: fc.array(fc.tuple(coord, coord), { maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constant('traffic' as const),
    sensorMac: text,
    sensedAtMs: count,
    intervalMs: count,
    in: count,
    out: count,
  }),
);
const batch: fc.Arbitrary<UplinkBatch> = fc.record({
  hiveSerial: text,
  seq: count,
  sentAtMs: count,
  packets: fc.array(packet, { maxLength: 8 }),
});
const mutated = batch.chain((b) => {
  const bytes = encodeUplinkReflect(b);
  const at = fc.nat({ max: Math.max(0, bytes.length - 1) });
  return fc.oneof(
    fc.tuple(at, fc.integer({ min: 0, max: 255 })).map(([i, v]) => Uint8Array.from(bytes, (x, j) => (j === i ? v : x))),
    at.map((i) => bytes.slice(0, i)),
    at.map((i) => Uint8Array.from([...bytes.slice(0, i), ...bytes.slice(i + 1)])),
    fc
      .tuple(at, fc.uint8Array({ minLength: 1, maxLength: 6 }))
      .map(([i, ins]) => Uint8Array.from([...bytes.slice(0, i), ...ins, ...bytes.slice(i)])),
  );
});

describe('the checker reads an uplink as protobufjs reflection did', () => {
  it(`reads valid batches, random bytes and mutated batches alike (seed ${String(SEED)})`, () => {
    fc.assert(
      fc.property(batch, (b) => expectAsReflection(encodeUplinkReflect(b))),
      { seed: SEED, numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), (bytes) => expectAsReflection(bytes)),
      { seed: SEED, numRuns: 2000 },
    );
    fc.assert(
      fc.property(mutated, (bytes) => expectAsReflection(bytes)),
      { seed: SEED, numRuns: 4000 },
    );
  });

  it('reports a packet without a body as a field, and keeps both bodies of a packet that has two', () => {
    const cases = [
      '22050a016d1003', // no body: a packet all the same
      '22090a016d10031a002200', // presence then traffic: both kept, body traffic
      '22090a016d100322001a00', // traffic then presence: the same
      '22210a016d10031a0c0a0a0d0000803f15000000401a0c0a0a0d000040401500008040', // the later presence body
      '0a01481001',
      '2806',
      '',
    ];
    for (const c of cases) expectAsReflection(Buffer.from(c, 'hex'));
    expect(rawUplink(Buffer.from('22050a016d1003', 'hex'))).toEqual({
      packets: [{ sensorMac: 'm', sensedAtMs: 3 }],
      hiveSerial: '',
      seq: 0,
      sentAtMs: 0,
      protocolMinor: 0,
    });
  });
});
