import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { startBroker } from '../../src/broker/aedes-broker.js';
import { startCloud, type Cloud } from '../../src/cloud/cloud.js';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { ackTopic, uplinkTopic } from '../../src/core/topics.js';
import { decodeAck, encodeUplink } from '../../src/proto/codec.js';
import type { WirePacket } from '../../src/proto/messages.js';
import {
  FLOOR,
  HIVE_SERIAL,
  presenceAt,
  ROOM_A,
  ROOM_B,
  SENSOR_PA,
  SENSOR_PB,
  SENSOR_T,
  T0,
  tinyModel,
  trafficAt,
} from './fixture.js';

const MIN = 60_000;

/**
 * Two clouds (ingest processes) on the embedded Aedes broker, sharing the uplinks through
 * `$share/ingest/…` (broker/shared-subscriptions.ts) and one store file; one owns the floor.
 * The floor's batches land on both, round robin; the stored minutes equal one cloud's.
 */
function packetsOf(minute: number): WirePacket[] {
  const t = T0 + minute * MIN;
  return [
    presenceAt(SENSOR_PA, t, [[7, 5]]),
    presenceAt(SENSOR_PB, t, minute % 3 === 0 ? [[12, 5]] : []),
    trafficAt(SENSOR_T, t + 1000, minute % 4, 1),
  ];
}

async function run(clouds: 1 | 2): Promise<{ presence: unknown[]; traffic: unknown[]; batches: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-partitioned-'));
  const model = tinyModel();
  const services = [1, 2].map((i) => ({ username: `cloud-${i}`, password: `pw-${i}`, role: 'cloud' as const }));
  const broker = await startBroker({ hives: [{ serial: HIVE_SERIAL, password: 'secret' }], services });
  const clock = new VirtualClock(T0);
  const started: Cloud[] = [];
  try {
    for (let i = 0; i < clouds; i++) {
      const s = services[i] as (typeof services)[number];
      started.push(
        await startCloud({
          brokerUrl: broker.url,
          username: s.username,
          password: s.password,
          clientId: s.username,
          catalogue: catalogueFromScenario(model),
          tickMs: model.tickMs,
          clock,
          store: sqliteStore(join(dir, 'store.sqlite')),
          ...(clouds === 2 ? { shareGroup: 'ingest', partition: { self: `${i + 1}/2`, ownerOf: () => '2/2' } } : {}),
        }),
      );
    }
    const hive = await connectAsync(broker.url, {
      clientId: `hive-${HIVE_SERIAL}`,
      username: HIVE_SERIAL,
      password: 'secret',
    });
    await hive.subscribeAsync(ackTopic(HIVE_SERIAL), { qos: 1 });
    for (let m = 0; m < 12; m++) {
      clock.advanceTo(T0 + (m + 1) * MIN);
      const acked = new Promise<number>((r) => hive.once('message', (_t, p) => r(decodeAck(p).ackedSeq)));
      await hive.publishAsync(
        uplinkTopic(HIVE_SERIAL),
        Buffer.from(encodeUplink({ hiveSerial: HIVE_SERIAL, seq: m + 1, sentAtMs: T0, packets: packetsOf(m) })),
        { qos: 1 },
      );
      expect(await acked).toBe(m + 1);
      // As the shards' clock channel does: every process moves on once the batch is stored.
      for (const c of started) await c.advance(T0 + (m + 1) * MIN);
    }
    await hive.endAsync();
    for (const c of started) await c.finish();
    const batches = started.map((c) => c.counters().batchesProcessed);
    for (const c of started) await c.close();
    const s = sqliteStore(join(dir, 'store.sqlite')).sync;
    const out = {
      presence: [ROOM_A, ROOM_B, FLOOR].flatMap((id) => s.presenceMinutes(id)),
      traffic: s.trafficMinutes(SENSOR_T.id),
      batches,
    };
    s.close();
    return out;
  } finally {
    await broker.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('two partitioned clouds on the embedded broker', () => {
  it("store one cloud's minutes although the floor's batches are split between them", async () => {
    const one = await run(1);
    const two = await run(2);
    expect(two.batches).toEqual([6, 6]); // round robin over the group's two members
    expect(one.presence).toHaveLength(36);
    expect(two.presence).toEqual(one.presence);
    expect(two.traffic).toEqual(one.traffic);
  });
});
