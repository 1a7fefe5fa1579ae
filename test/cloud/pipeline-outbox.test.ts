import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import type { SensorEvent } from '../../src/cloud/events.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import type { OccupancyEvent, Store } from '../../src/store/port.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import type { DeliveryInsert } from '../../src/store/webhook-port.js';
import { VirtualClock } from '../../src/core/clock.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import { postgresPerFile } from '../support/postgres-per-file.js';
import { HIVE_SERIAL, presenceAt, ROOM_A, SENSOR_PA, SENSOR_T, T0, tinyModel, trafficAt } from './fixture.js';

/**
 * Webhook events are enqueued in the transaction that stores what produces them: DETECTIONS
 * and TRAFFIC deliveries with their uplink batch, occupancy events with their minutes. A
 * failure inside that transaction (injected here as a row the store refuses) leaves neither,
 * so the hive's retransmission (the batch was not acked) stores both exactly once.
 */
interface Adapter {
  open(): Promise<{ store: Store; deliveries(): Promise<Array<{ eventId: string; eventType: string }>> }>;
}

const dir = mkdtempSync(join(tmpdir(), 'occusim-outbox-'));
const { skip: pgSkip, createDatabase } = postgresPerFile();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const sqlite: Adapter = {
  open() {
    const path = join(dir, `store-${++files}.sqlite`);
    const store = sqliteStore(path);
    return Promise.resolve({
      store,
      deliveries() {
        const hooks = new SqliteWebhookStore(path);
        try {
          return Promise.resolve(hooks.deliveries('wh_1').map((d) => ({ eventId: d.eventId, eventType: d.eventType })));
        } finally {
          hooks.close();
        }
      },
    });
  },
};

const postgres: Adapter = {
  async open() {
    const url = await createDatabase();
    const store = await PostgresStore.open(url);
    return {
      store,
      async deliveries() {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          const r = await c.query<{ event_id: string; event_type: string }>(
            "SELECT event_id, event_type FROM webhook_deliveries WHERE subscription_id = 'wh_1' ORDER BY id",
          );
          return r.rows.map((x) => ({ eventId: x.event_id, eventType: x.event_type }));
        } finally {
          await c.end();
        }
      },
    };
  },
};

/** A subscription to every sensor event; `refuse` makes the store reject the deliveries (a NULL body). */
function deliveriesOf(refuse: { on: boolean }) {
  return (events: readonly SensorEvent[], t: number): DeliveryInsert[] =>
    events.map((e) => ({
      subscriptionId: 'wh_1',
      eventId: e.eventId,
      eventType: e.type,
      eventTimestampMs: e.timestampMs,
      body: (refuse.on ? null : JSON.stringify(e.data)) as string,
      enqueuedAtMs: t,
      nextAttemptMs: t,
    }));
}

const message = encodeUplink({
  hiveSerial: HIVE_SERIAL,
  seq: 1,
  sentAtMs: T0,
  packets: [presenceAt(SENSOR_PA, T0, [[5, 5]]), trafficAt(SENSOR_T, T0 + 1000, 1, 0)],
});

function pipelineOver(store: Store, refuse: { on: boolean }): CloudPipeline {
  const model = tinyModel();
  return new CloudPipeline({
    catalogue: catalogueFromScenario(model),
    tickMs: model.tickMs,
    store,
    clock: new VirtualClock(T0 + 2000),
    lookbackMs: 300_000,
    sensorDeliveries: deliveriesOf(refuse),
  });
}

for (const [name, adapter, skip] of [
  ['SQLite', sqlite, null],
  ['PostgreSQL', postgres, pgSkip],
] as const) {
  describe.skipIf(skip !== null)(`the webhook outbox in the producing transaction (${name})`, () => {
    it('stores a batch and its DETECTIONS/TRAFFIC deliveries together or not at all, and exactly once after the retransmission', async () => {
      const { store, deliveries } = await adapter.open();
      const refuse = { on: true };
      const first = pipelineOver(store, refuse);
      await expect(first.handleMessage(uplinkTopic(HIVE_SERIAL), message)).rejects.toThrow();
      expect(await store.hasBatch(HIVE_SERIAL, 1)).toBe(false);
      expect(await store.ackedSeq(HIVE_SERIAL)).toBe(0);
      expect(await store.payloadsSensedIn(T0, T0 + 60_000)).toEqual([]);
      expect(await deliveries()).toEqual([]);
      // The process restarts (a new pipeline on the same store); the hive retransmits the unacked batch, twice.
      refuse.on = false;
      const second = pipelineOver(store, refuse);
      expect(await second.handleMessage(uplinkTopic(HIVE_SERIAL), message)).toMatchObject({ ackedSeq: 1 });
      expect(await second.handleMessage(uplinkTopic(HIVE_SERIAL), message)).toMatchObject({ ackedSeq: 1 });
      expect((await deliveries()).map((d) => d.eventType)).toEqual(['DETECTIONS', 'TRAFFIC']);
      expect(second.counters()).toMatchObject({ batchesProcessed: 1, duplicateBatches: 1, packetsProcessed: 2 });
      await store.close();
    });

    it('stores minutes and the occupancy events they produce together or not at all', async () => {
      const { store } = await adapter.open();
      const event: OccupancyEvent = {
        eventId: 'event_1',
        type: 'ROOM_OCCUPANCY_1M',
        spaceId: ROOM_A,
        minuteMs: T0,
        value: 1,
        revision: 0,
        emittedAtMs: T0 + 60_000,
      };
      const presence = [{ spaceId: ROOM_A, minuteMs: T0, value: 1, samples: 60 }];
      const traffic = [{ sensorId: SENSOR_T.id, minuteMs: T0, in: 1, out: 0 }];
      const refused = { ...event, eventId: null as unknown as string };
      await expect(store.writeMinutes({ presence, traffic, events: [event, refused] })).rejects.toThrow();
      expect(await store.presenceMinutes(ROOM_A)).toEqual([]);
      expect(await store.trafficMinutes(SENSOR_T.id)).toEqual([]);
      expect(await store.events()).toEqual([]);
      await store.writeMinutes({ presence, traffic, events: [event] });
      expect(await store.presenceMinutes(ROOM_A)).toEqual(presence);
      expect((await store.events()).map((e) => e.eventId)).toEqual(['event_1']);
      await store.close();
    });
  });
}
