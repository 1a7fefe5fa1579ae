/**
 * `npx tsx bench/store-status.ts [sizes] [intervals]`: CPU per batch of the SQLite store's
 * batch write as a fleet makes it — every hive one batch per interval (the batch row, a
 * payload, its sensors' last-seen updates, the ack progress, one transaction), hives in a
 * shuffled order, sensor ids hash-like as the catalogue's — plus each hive's heartbeat with its
 * sensors' health every sixth interval (60 s heartbeats, 10 s batches). The table's rows are
 * written by the first interval; the CPU of the intervals after it is what a running fleet pays
 * per batch. A file in the temp directory, WAL, the store's own pragmas.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite-store.js';

const SENSORS_PER_HIVE = 37; // ~2,700 batches a 10 s interval for 100,000 sensors
const PAYLOAD = new Uint8Array(6000).fill(7);
const T0 = Date.UTC(2026, 2, 3);

/** A deterministic 32-bit mix (bench data only). */
function mix(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

function run(sensors: number, intervals: number): { perBatchUs: number; perHeartbeatUs: number } {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-status-'));
  const store = new SqliteStore(join(dir, 'store.db'));
  try {
    const hives = Math.ceil(sensors / SENSORS_PER_HIVE);
    const ids = Array.from({ length: hives }, (_, h) =>
      Array.from(
        { length: SENSORS_PER_HIVE },
        (_, k) =>
          `sensor_${mix(h * SENSORS_PER_HIVE + k)
            .toString(16)
            .padStart(8, '0')}${mix(~(h * SENSORS_PER_HIVE + k))
            .toString(16)
            .padStart(8, '0')}`,
      ),
    );
    const serial = (h: number): string => `HV${String(h).padStart(10, '0')}`;
    const order = Array.from({ length: hives }, (_, h) => h).sort((a, b) => mix(a + 7) - mix(b + 7));
    let batchCpu = 0;
    let batches = 0;
    let beatCpu = 0;
    let beats = 0;
    for (let i = 0; i < intervals; i++) {
      const t = T0 + i * 10_000;
      const c0 = process.cpuUsage();
      for (const h of order) {
        const seen = (ids[h] as string[]).map((sensorId, k) => ({ sensorId, lastSeenMs: t + k }));
        store.writeBatch({
          hiveSerial: serial(h),
          seq: i + 1,
          sentAtMs: t,
          receivedAtMs: t,
          ackedSeq: i + 1,
          packetCount: 370,
          raw: { payload: PAYLOAD, minSensedMs: t, maxSensedMs: t + 9_999 },
          deadLetters: [],
          sensorsSeen: seen,
        });
      }
      const c1 = process.cpuUsage(c0);
      if (i > 0) {
        batchCpu += c1.user + c1.system;
        batches += hives;
      }
      if (i % 6 === 0) {
        const b0 = process.cpuUsage();
        for (const h of order) {
          const health = (ids[h] as string[]).map((sensorId, k) => ({
            sensorId,
            measuredAtMs: t + k,
            batteryLevel: 0.5,
            batteryRuntimeS: 86_400,
            rssiDbm: -70,
            linkPdr: 0.97,
            uptimeMs: t - T0,
            parent: serial(h),
            hops: 1,
            queueOverflows: 0,
          }));
          store.writeHeartbeat(
            {
              hiveId: `hive_${h}`,
              hiveSerial: serial(h),
              lastHeartbeatMs: t,
              sentAtMs: t,
              state: 'streaming',
              firmwareVersion: '1.4.2',
              protocolMinor: 1,
              uptimeMs: t - T0,
              netPathStability: 1,
              ackedSeq: i + 1,
              nextSeq: i + 2,
              bufferedBatches: 0,
              bufferedBytes: 0,
              droppedPackets: 0,
            },
            health,
          );
        }
        const b1 = process.cpuUsage(b0);
        if (i > 0) {
          beatCpu += b1.user + b1.system;
          beats += hives;
        }
      }
    }
    return { perBatchUs: batchCpu / batches, perHeartbeatUs: beats > 0 ? beatCpu / beats : NaN };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sizes = (process.argv[2] ?? '30k,100k')
  .split(',')
  .map((s) => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1));
const intervals = Number(process.argv[3] ?? 13);
for (const n of sizes) {
  const r = run(n, intervals);
  console.log(
    `  ${n.toLocaleString('en-US')} sensors, ${SENSORS_PER_HIVE} a hive, ${intervals} intervals: ${r.perBatchUs.toFixed(0)} µs CPU per batch write, ${r.perHeartbeatUs.toFixed(0)} µs per heartbeat (${SENSORS_PER_HIVE} health rows)`,
  );
}
