import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite-store.js';
import type { RollupBucket } from '../src/store/port.js';
import { encodeUplink } from '../src/proto/codec.js';

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const MIN = 60_000;
const DAY0 = Date.UTC(2026, 2, 3);

/** Store write throughput (a file in WAL mode) and the 1 day × 1m × 1,000 rooms query. */
export function storeBench(_messages: number): void {
  const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'occusim-bench-')), 'bench.sqlite'));
  const detections: Array<[number, number]> = [
    [0.25, 0.5],
    [0.75, 0.5],
  ];
  const batches = 2000;
  // What the live cloud writes per batch: one row and the payload once (no row per packet).
  const payloads = Array.from({ length: batches }, (_, k) => {
    const seq = k + 1;
    const packets = Array.from({ length: 200 }, (_, i) => ({
      kind: 'presence' as const,
      sensorMac: `00-17-0d-00-00-00-00-${String(i % 20).padStart(2, '0')}`,
      sensedAtMs: DAY0 + seq * 10_000 + i,
      detections,
    }));
    return encodeUplink({ hiveSerial: 'HV0000000001', seq, sentAtMs: 0, packets });
  });
  let t0 = performance.now();
  for (let seq = 1; seq <= batches; seq++) {
    const raw = {
      payload: payloads[seq - 1] as Uint8Array,
      minSensedMs: DAY0 + seq * 10_000,
      maxSensedMs: DAY0 + seq * 10_000 + 199,
    };
    store.writeBatch({
      hiveSerial: 'HV0000000001',
      seq,
      sentAtMs: 0,
      receivedAtMs: 0,
      ackedSeq: seq,
      packetCount: 200,
      raw,
      deadLetters: [],
      sensorsSeen: Array.from({ length: 20 }, (_, i) => ({ sensorId: `sensor_${i}`, lastSeenMs: DAY0 + seq * 10_000 })),
    });
  }
  const batchMs = performance.now() - t0;
  console.log(
    `  store: batch writes (200 packets, one transaction each: batch row, payload, last seen of 20 sensors) ${fmt((batches * 200) / (batchMs / 1000))} packets/s, ${fmt(batches / (batchMs / 1000))} batches/s`,
  );
  const rooms = 1000;
  t0 = performance.now();
  for (let r = 0; r < rooms; r++) {
    store.writePresenceMinutes(
      Array.from({ length: 1440 }, (_, m) => ({
        spaceId: `room_${String(r).padStart(4, '0')}`,
        minuteMs: DAY0 + m * MIN,
        value: (m * 7 + r) % 13,
        samples: 60,
      })),
    );
  }
  const minuteMs = performance.now() - t0;
  console.log(`  store: minute rows ${fmt((rooms * 1440) / (minuteMs / 1000))} rows/s (1,000 rooms × 1,440 minutes)`);
  t0 = performance.now();
  const buckets: RollupBucket[] = [];
  for (let r = 0; r < rooms; r++)
    for (let h = 0; h < 24; h++)
      buckets.push({
        spaceId: `room_${String(r).padStart(4, '0')}`,
        level: '1h',
        startMs: DAY0 + h * 3_600_000,
        endMs: DAY0 + (h + 1) * 3_600_000,
      });
  store.refreshRollups(buckets);
  console.log(`  store: 1h rollups of 1,000 rooms × 1 day in ${Math.round(performance.now() - t0)} ms`);
  for (const every of ['1m', '1h'] as const) {
    t0 = performance.now();
    let points = 0;
    for (let r = 0; r < rooms; r++)
      points += store.presenceSeries(`room_${String(r).padStart(4, '0')}`, every, DAY0, DAY0 + 1440 * MIN).length;
    console.log(
      `  query: 1 day × ${every} × 1,000 rooms → ${fmt(points)} points in ${Math.round(performance.now() - t0)} ms`,
    );
  }
  store.close();
}
