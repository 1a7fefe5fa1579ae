import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/cloud/store/sqlite-store.js';
import type { RollupBucket } from '../src/cloud/store/port.js';

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const MIN = 60_000;
const DAY0 = Date.UTC(2026, 2, 3);

/** Store write throughput (a file in WAL mode) and the 1 day × 1m × 1,000 rooms query. */
export function storeBench(_messages: number): void {
  const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'occusim-bench-')), 'bench.sqlite'));
  const detections: Array<readonly [number, number]> = [[0.25, 0.5], [0.75, 0.5]];
  let t0 = performance.now();
  const batches = 2000;
  for (let seq = 1; seq <= batches; seq++) {
    const presence = Array.from({ length: 200 }, (_, i) => ({ sensorId: `sensor_${i % 20}`, sensedAtMs: DAY0 + seq * 10_000 + i, detections }));
    store.writeBatch({ hiveSerial: 'HV0000000001', seq, sentAtMs: 0, receivedAtMs: 0, ackedSeq: seq, presence, traffic: [], deadLetters: [] });
  }
  const batchMs = performance.now() - t0;
  console.log(`  store: batch writes (200 packets, one transaction each) ${fmt((batches * 200) / (batchMs / 1000))} packets/s, ${fmt(batches / (batchMs / 1000))} batches/s`);
  const rooms = 1000;
  t0 = performance.now();
  for (let r = 0; r < rooms; r++) {
    store.writePresenceMinutes(Array.from({ length: 1440 }, (_, m) => ({ spaceId: `room_${String(r).padStart(4, '0')}`, minuteMs: DAY0 + m * MIN, value: (m * 7 + r) % 13, samples: 60 })));
  }
  const minuteMs = performance.now() - t0;
  console.log(`  store: minute rows ${fmt((rooms * 1440) / (minuteMs / 1000))} rows/s (1,000 rooms × 1,440 minutes)`);
  t0 = performance.now();
  const buckets: RollupBucket[] = [];
  for (let r = 0; r < rooms; r++) for (let h = 0; h < 24; h++) buckets.push({ spaceId: `room_${String(r).padStart(4, '0')}`, level: '1h', startMs: DAY0 + h * 3_600_000, endMs: DAY0 + (h + 1) * 3_600_000 });
  store.refreshRollups(buckets);
  console.log(`  store: 1h rollups of 1,000 rooms × 1 day in ${Math.round(performance.now() - t0)} ms`);
  for (const every of ['1m', '1h'] as const) {
    t0 = performance.now();
    let points = 0;
    for (let r = 0; r < rooms; r++) points += store.presenceSeries(`room_${String(r).padStart(4, '0')}`, every, DAY0, DAY0 + 1440 * MIN).length;
    console.log(`  query: 1 day × ${every} × 1,000 rooms → ${fmt(points)} points in ${Math.round(performance.now() - t0)} ms`);
  }
  store.close();
}
