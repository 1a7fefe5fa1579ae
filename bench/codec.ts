/**
 * Codec section: CPU time per packet to encode and decode a realistic HiveUplink (2,000
 * presence packets with 0–3 detections each), the reflection codec against the hand-written
 * encoder (src/proto/uplink-wire.ts) and the one decoder (src/proto/uplink-decode.ts), and
 * that decoder against the two it replaced (#31 item 6, now oracles in test/oracles/): the
 * previous hand-written decoder into objects, and the cloud hot path's previous scanner
 * against the walk the hot path now reads (a visitor that only counts, on both sides).
 * Measured side by side in one process; CPU time (process.cpuUsage) rather than wall time:
 * the machine is shared.
 */
import { loadavg } from 'node:os';
import { decodeUplink, encodeUplink } from '../src/proto/codec.js';
import { readUplink, type UplinkVisitor } from '../src/proto/uplink-decode.js';
import { decodeUplinkReflect, encodeUplinkReflect } from '../test/oracles/uplink-reflect.js';
import { decodeUplinkWireOracle } from '../test/oracles/uplink-wire-decode.js';
import { WireScanner, type ScanVisitor } from '../test/oracles/wire-scan.js';
import type { UplinkBatch, WirePacket } from '../src/proto/messages.js';

const PACKETS = 2_000;
const ROUNDS = 5;
const ITERATIONS = 40;

/** Deterministic batch: mulberry32 from a fixed seed. */
function realisticBatch(): UplinkBatch {
  let s = 7;
  const rand = (): number => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const packets: WirePacket[] = [];
  for (let i = 0; i < PACKETS; i++) {
    const n = Math.floor(rand() * 4);
    const detections: Array<readonly [number, number]> = [];
    for (let d = 0; d < n; d++) detections.push([Math.fround(rand()), Math.fround(rand())]);
    const mac = `00-17-0d-00-00-${(i >> 8).toString(16).padStart(2, '0')}-${(i & 255).toString(16).padStart(2, '0')}-00`;
    packets.push({ kind: 'presence', sensorMac: mac, sensedAtMs: 1_772_434_800_000 + i * 10, detections });
  }
  return { hiveSerial: 'HV0011223344', seq: 123_456, sentAtMs: 1_772_434_801_000, packets, protocolMinor: 1 };
}

/** Best-of-ROUNDS CPU µs per packet for fn over ITERATIONS calls. */
function cpuPerPacket(fn: () => void): number {
  for (let i = 0; i < 5; i++) fn();
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.cpuUsage();
    for (let i = 0; i < ITERATIONS; i++) fn();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / (ITERATIONS * PACKETS));
  }
  return best;
}

export function runCodecBench(): Promise<void> {
  const batch = realisticBatch();
  const bytes = encodeUplinkReflect(batch);
  if (Buffer.compare(Buffer.from(encodeUplink(batch)), Buffer.from(bytes)) !== 0)
    throw new Error('bench codec: the two encoders disagree');
  console.log(
    `== codec: HiveUplink, ${String(PACKETS)} presence packets with 0-3 detections, ${String(bytes.length)} bytes; CPU µs/packet, best of ${String(ROUNDS)}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  let sink = 0;
  const count = (): void => {
    sink++;
  };
  const counting: UplinkVisitor = {
    header: count,
    presenceBody: count,
    point: count,
    presence: count,
    bodiless: count,
    traffic: count,
  };
  const scanCounting: ScanVisitor = {
    header: count,
    presenceStart: count,
    point: count,
    presenceEnd: count,
    traffic: count,
  };
  const scanner = new WireScanner();
  const rows: Array<[string, string, () => void, string, () => void]> = [
    [
      'encode',
      'reflection',
      () => {
        sink += encodeUplinkReflect(batch).length;
      },
      'hand-written',
      () => {
        sink += encodeUplink(batch).length;
      },
    ],
    [
      'decode',
      'reflection',
      () => {
        sink += decodeUplinkReflect(bytes).packets.length;
      },
      'one decoder',
      () => {
        sink += decodeUplink(bytes).packets.length;
      },
    ],
    [
      'decode',
      'previous hand-written',
      () => {
        sink += decodeUplinkWireOracle(bytes).packets.length;
      },
      'one decoder',
      () => {
        sink += decodeUplink(bytes).packets.length;
      },
    ],
    [
      'hot walk',
      'previous scanner',
      () => scanner.scan(bytes, scanCounting),
      'readUplink',
      () => readUplink(bytes, counting),
    ],
  ];
  for (const [name, baseLabel, base, liveLabel, live] of rows) {
    const before = cpuPerPacket(base);
    const after = cpuPerPacket(live);
    console.log(
      `  ${name.padEnd(8)} ${baseLabel} ${before.toFixed(3)} µs   ${liveLabel} ${after.toFixed(3)} µs   ×${(before / after).toFixed(2)}`,
    );
  }
  if (sink < 0) console.log(sink);
  return Promise.resolve();
}
