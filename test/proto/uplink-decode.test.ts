import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeUplinkWireOracle } from '../oracles/uplink-wire-decode.js';
import { encodeUplinkReflect } from '../oracles/uplink-reflect.js';
import { isAppError } from '../../src/core/errors.js';
import { decodeUplinkBytes } from '../../src/proto/uplink-decode.js';
import { encodeUplinkWire } from '../../src/proto/uplink-wire.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';

/**
 * The one uplink decoder (src/proto/uplink-decode.ts) against the hand-written decoder it
 * replaced (test/oracles/uplink-wire-decode.ts), which the cloud's slow path and ingest used:
 * the same batch, or the same refusal with the same reason text (a dead letter carries it),
 * on valid, random and mutated bytes, each as a Buffer (what MQTT and the store hand over) and
 * as a plain Uint8Array (protobufjs reads strings of the two differently).
 * test/proto/uplink-wire.test.ts holds it to protobufjs reflection as well.
 */
const SEED = 20_261_128;
console.log(`uplink-decode properties: fast-check seed ${String(SEED)}`);

type Verdict = { ok: UplinkBatch } | { err: string };

function verdict(decode: (b: Uint8Array) => UplinkBatch, bytes: Uint8Array): Verdict {
  try {
    return { ok: decode(bytes) };
  } catch (err) {
    return {
      err: isAppError(err, 'DECODE_FAILED') ? `DECODE_FAILED ${err.message}` : `not an AppError: ${String(err)}`,
    };
  }
}

function expectSameAsBefore(bytes: Uint8Array): void {
  for (const input of [Buffer.from(bytes), Uint8Array.from(bytes)]) {
    const live = verdict(decodeUplinkBytes, input);
    const before = verdict(decodeUplinkWireOracle, input);
    // JSON as well: key order too (a dead letter stores a packet as JSON).
    expect(live).toEqual(before);
    expect(JSON.stringify(live)).toBe(JSON.stringify(before));
  }
}

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: fc.constantFrom('a', '\ud800', '\udc00', 'é', '😀') }),
  fc.constant('00-17-0d-00-00-aa-bb-cc'),
);
const count = fc.oneof(fc.nat(10), fc.nat(), fc.constantFrom(2 ** 32 - 1, 2 ** 32, 2 ** 53, 2 ** 64));
const coord = fc.oneof(fc.float({ min: 0, max: 16, noNaN: true }).map(Number), fc.double());
const packet: fc.Arbitrary<WirePacket> = fc.oneof(
  fc.record({
    kind: fc.constant('presence' as const),
    sensorMac: text,
    sensedAtMs: fc.oneof(fc.integer({ min: 0, max: 4_102_444_800_000 }), count),
    detections: fc.array(fc.tuple(coord, coord), { maxLength: 4 }),
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
const batch: fc.Arbitrary<UplinkBatch> = fc
  .record({
    hiveSerial: text,
    seq: count,
    sentAtMs: count,
    packets: fc.array(packet, { maxLength: 12 }),
    protocolMinor: fc.option(count, { nil: undefined }),
  })
  .map(({ protocolMinor, ...rest }): UplinkBatch => (protocolMinor === undefined ? rest : { ...rest, protocolMinor }));

/** A valid encoding with one edit: a byte set, a cut, a byte deleted, bytes inserted, a span repeated. */
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
    fc
      .tuple(at, fc.integer({ min: 1, max: 24 }))
      .map(([i, n]) => Uint8Array.from([...bytes.slice(0, i + n), ...bytes.slice(i)])),
  );
});

describe('the one uplink decoder against the decoder it replaced', () => {
  it(`reads every valid batch as it did (seed ${String(SEED)})`, () => {
    fc.assert(
      fc.property(batch, (b) => expectSameAsBefore(encodeUplinkWire(b))),
      { seed: SEED, numRuns: 1000 },
    );
  });

  it(`accepts and refuses random bytes as it did, with the same reasons (seed ${String(SEED)})`, () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 160 }), (bytes) => expectSameAsBefore(bytes)),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it(`accepts and refuses mutated batches as it did, with the same reasons (seed ${String(SEED)})`, () => {
    fc.assert(
      fc.property(mutated, (bytes) => expectSameAsBefore(bytes)),
      { seed: SEED, numRuns: 5000 },
    );
  });

  it('keeps the edge cases: later fields win, unknown fields skipped, groups, cut strings, huge lengths, no body', () => {
    const cases = [
      '0a01481001', // serial, seq
      '0a01480a0149', // a second serial replaces the first
      '220e0a016d10031a070a050d0000803f', // a detection without y
      '22210a016d10031a0c0a0a0d0000803f15000000401a0c0a0a0d000040401500008040', // a second presence body replaces the first
      '22090a016d10031a002200', // presence then traffic (empty): traffic wins
      '22090a016d100322001a00', // traffic then presence: traffic still wins
      '22050a016d1003', // a packet with no body
      '0a0148b80105', // unknown varint field 23: skipped
      '0a0148fa0102abcd', // unknown length-delimited field 31: skipped
      '0a01481b0a01481c', // a group (wire type 3) around a known field
      '0a01481c', // an end-group tag with no group: invalid wire type 4
      '0a01480f', // wire type 7
      '08011a00', // serial with wire type 0: read as a string all the same
      '0a02e2821001', // a serial whose 3-byte sequence the field cuts short
      '0affffffff0f', // a claimed 4 GiB serial
      '22ffffffff0f0a', // a claimed 4 GiB packet
      '1080808080808080808001', // an 11-byte varint
      '10ff', // a truncated varint
      '2806', // protocol_minor 6
      '',
    ];
    for (const c of cases) expectSameAsBefore(Buffer.from(c, 'hex'));
    expect(verdict(decodeUplinkBytes, Buffer.from('22050a016d1003', 'hex'))).toEqual({
      err: 'DECODE_FAILED packets[0]: no presence or traffic body',
    });
    const packets = (hex: string): unknown => (decodeUplinkBytes(Buffer.from(hex, 'hex')) as UplinkBatch).packets;
    expect(packets('22210a016d10031a0c0a0a0d0000803f15000000401a0c0a0a0d000040401500008040')).toEqual([
      { kind: 'presence', sensorMac: 'm', sensedAtMs: 3, detections: [[3, 4]] },
    ]);
    expect(packets('22090a016d10031a002200')).toEqual([
      { kind: 'traffic', sensorMac: 'm', sensedAtMs: 3, intervalMs: 0, in: 0, out: 0 },
    ]);
  });
});
