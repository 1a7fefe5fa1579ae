import { spawn, type ChildProcess } from 'node:child_process';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { connectAsync } from 'mqtt';
import { describe, expect, it } from 'vitest';
import { startBroker } from '../../src/broker/aedes-broker.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { rngFor } from '../../src/core/rng.js';
import { ackTopic, uplinkTopic } from '../../src/core/topics.js';
import { decodeAck, encodeUplink } from '../../src/proto/codec.js';
import type { UplinkBatch, WirePacket } from '../../src/proto/messages.js';
import { HIVE, HIVE_SERIAL, presenceAt, SENSOR_PA, SENSOR_PB, SENSOR_T, T0, tinyModel, trafficAt } from './fixture.js';

/**
 * Crash safety over real processes: a cloud process is killed with SIGKILL while a hive
 * streams batches over MQTT, restarted on the same SQLite file, and the hive resends what
 * was not acknowledged. The stored series must equal those of a run without the crash: no
 * acknowledged batch lost, nothing counted twice.
 */
const SCRIPT = fileURLToPath(new URL('./support/cloud-process.ts', import.meta.url));
const BATCHES = 240;
const PASSWORD = 'cloud-secret';

function batches(): UplinkBatch[] {
  const r = rngFor(42, 'crash-test');
  const rng = (): number => r.next();
  const out: UplinkBatch[] = [];
  for (let seq = 1; seq <= BATCHES; seq++) {
    const t = T0 + (seq - 1) * 5000;
    const people = (): Array<[number, number]> =>
      Array.from({ length: Math.floor(rng() * 4) }, () => [4 + rng() * 12, 1 + rng() * 8]);
    const packets: WirePacket[] = [
      presenceAt(SENSOR_PA, t, people()),
      presenceAt(SENSOR_PB, t, people()),
      trafficAt(SENSOR_T, t, Math.floor(rng() * 3), Math.floor(rng() * 3)),
    ];
    out.push({ hiveSerial: HIVE_SERIAL, seq, sentAtMs: t, packets });
  }
  return out;
}

function startCloudProcess(brokerUrl: string, dbPath: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, brokerUrl, PASSWORD, dbPath], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => (m === 'ready' ? resolve(child) : reject(new Error(String(m)))));
    child.once('exit', (code) => reject(new Error(`cloud process exited early (${code})`)));
  });
}

async function reference(all: readonly UplinkBatch[]) {
  const store = new SqliteStore(':memory:');
  const pipeline = new CloudPipeline({
    catalogue: catalogueFromScenario(tinyModel()),
    tickMs: tinyModel().tickMs,
    store: asyncStore(store),
    clock: new VirtualClock(T0 + 3_600_000),
    lookbackMs: 5 * 60_000,
  });
  for (const b of all) await pipeline.handleMessage(uplinkTopic(b.hiveSerial), encodeUplink(b));
  await pipeline.finish();
  return store;
}

const dump = (db: Database.Database, sql: string): unknown[] => db.prepare(sql).all();

describe('cloud crash safety', () => {
  it('loses no acknowledged batch and counts nothing twice when killed with SIGKILL and restarted', async () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), 'occusim-crash-')), 'cloud.sqlite');
    const broker = await startBroker({
      hives: [{ serial: HIVE.serial, password: HIVE.password }],
      services: [{ username: 'occusim-cloud', password: PASSWORD, role: 'cloud' }],
    });
    const hive = await connectAsync(broker.url, {
      clientId: `hive-${HIVE.serial}`,
      username: HIVE.serial,
      password: HIVE.password,
      clean: true,
    });
    const all = batches();
    let acked = 0;
    let onAck = (): void => {};
    await hive.subscribeAsync(ackTopic(HIVE.serial), { qos: 1 });
    hive.on('message', (_t, payload) => {
      acked = Math.max(acked, decodeAck(payload).ackedSeq);
      onAck();
    });
    const ackedAtLeast = (n: number): Promise<void> =>
      new Promise((resolve) => {
        onAck = () => acked >= n && resolve();
        onAck();
      });
    const send = async (from: number, to = all.length): Promise<void> => {
      for (const b of all.slice(from, to))
        await hive
          .publishAsync(uplinkTopic(HIVE.serial), Buffer.from(encodeUplink(b)), { qos: 1 })
          .catch(() => undefined);
    };
    try {
      let cloud = await startCloudProcess(broker.url, dbPath);
      cloud.send(`advance ${T0 + 12 * 60_000}`);
      // Three quarters before the crash: on a fast machine the cloud acked the whole stream
      // before the kill landed, and the crash hit nothing in flight. The rest is sent after.
      const streaming = send(0, (3 * BATCHES) / 4);
      await ackedAtLeast(BATCHES / 2);
      cloud.kill('SIGKILL'); // mid-stream: later batches reach no one, or are stored but not acked
      await new Promise((r) => cloud.once('exit', r));
      await streaming;
      const ackedBeforeCrash = acked;
      expect(ackedBeforeCrash).toBeGreaterThanOrEqual(BATCHES / 2);
      expect(ackedBeforeCrash).toBeLessThan(BATCHES);
      cloud = await startCloudProcess(broker.url, dbPath);
      await send(ackedBeforeCrash); // the hive resends everything not acknowledged
      await ackedAtLeast(BATCHES);
      cloud.send('finish');
      await new Promise((r) => cloud.once('message', r));
    } finally {
      await hive.endAsync();
      await broker.close();
    }
    const db = new Database(dbPath, { readonly: true });
    const ref = await reference(all);
    try {
      expect(dump(db, 'SELECT COUNT(*) AS n FROM batches')).toEqual([{ n: BATCHES }]);
      // Every batch's payload stored once (the raw record crash recovery re-reads), none twice.
      expect(dump(db, 'SELECT COUNT(*) AS n, COUNT(DISTINCT seq) AS seqs FROM batch_payloads')).toEqual([
        { n: BATCHES, seqs: BATCHES },
      ]);
      for (const space of ['room_a', 'room_b', 'zone_a1', 'space_f1']) {
        expect(
          dump(
            db,
            `SELECT minute_ms AS minuteMs, value, samples FROM presence_minute WHERE space_id = '${space}' ORDER BY minute_ms`,
          ),
        ).toEqual(ref.presenceMinutes(space).map(({ minuteMs, value, samples }) => ({ minuteMs, value, samples })));
      }
      expect(
        dump(
          db,
          `SELECT minute_ms AS minuteMs, in_count AS "in", out_count AS "out" FROM traffic_minute ORDER BY minute_ms`,
        ),
      ).toEqual(ref.trafficMinutes(SENSOR_T.id).map(({ minuteMs, in: i, out }) => ({ minuteMs, in: i, out })));
    } finally {
      db.close();
      ref.close();
    }
  }, 30_000);
});
