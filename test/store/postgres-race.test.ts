import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import type { Store } from '../../src/store/port.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { PostgresSession } from '../../src/store/postgres-session.js';
import { VirtualClock } from '../../src/core/clock.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import { HIVE_SERIAL, presenceAt, SENSOR_PA, T0, tinyModel, trafficAt, SENSOR_T } from '../cloud/fixture.js';
import { postgresPerFile } from '../support/postgres-per-file.js';

/**
 * Two ingest processes on one PostgreSQL store receive the same batch (a retransmission
 * split across a shared subscription): both asked `hasBatch` before either wrote. The loser
 * must see a duplicate — re-ack it, count it, store nothing twice — not fail its write.
 */
const { skip, createDatabase } = postgresPerFile();

async function count(url: string, sql: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query<{ n: string }>(sql)).rows[0]?.n);
  } finally {
    await c.end();
  }
}

/** The store as the loser sees it: `hasBatch` answered before the winner committed. */
function askedTooEarly(store: Store): Store {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'hasBatch') return () => Promise.resolve(false);
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe.skipIf(skip !== null)('two ingest processes racing for one batch on PostgreSQL', () => {
  it('stores the batch once when two connections write it at the same time: one true, one false', async () => {
    const url = await createDatabase();
    const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    const dl = {
      receivedAtMs: T0,
      topic: uplinkTopic(HIVE_SERIAL),
      reason: 'UNKNOWN_SENSOR' as const,
      message: 'x',
      payload: new Uint8Array([1]),
    };
    const write = (s: PostgresStore, seq: number) =>
      s.writeBatch({
        hiveSerial: HIVE_SERIAL,
        seq,
        sentAtMs: T0,
        receivedAtMs: T0,
        ackedSeq: seq,
        packetCount: 2,
        raw: { payload: Uint8Array.from([seq]), minSensedMs: T0, maxSensedMs: T0 },
        deadLetters: [dl],
      });
    // 20 batches, each written by both connections at once.
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => Promise.all([write(a, i + 1), write(b, i + 1)])),
    );
    for (const pair of outcomes) expect(pair.filter(Boolean)).toHaveLength(1);
    expect(await count(url, 'SELECT COUNT(*) AS n FROM batches')).toBe(20);
    expect(await count(url, 'SELECT COUNT(*) AS n FROM batch_payloads')).toBe(20);
    expect(await count(url, 'SELECT COUNT(*) AS n FROM dead_letters')).toBe(20);
    expect(await a.ackedSeq(HIVE_SERIAL)).toBe(20);
    await Promise.all([a.close(), b.close()]);
  });

  it("re-acks the loser's copy as a duplicate, counted, and aggregates the batch once", async () => {
    const url = await createDatabase();
    const model = tinyModel();
    const clock = new VirtualClock(T0 + 2000);
    const [sa, sb] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    const pipeline = (store: Store) =>
      new CloudPipeline({
        catalogue: catalogueFromScenario(model),
        tickMs: model.tickMs,
        store,
        clock,
        lookbackMs: 5 * 60_000,
      });
    const winner = pipeline(sa);
    const loser = pipeline(askedTooEarly(sb));
    const payload = encodeUplink({
      hiveSerial: HIVE_SERIAL,
      seq: 1,
      sentAtMs: T0,
      packets: [presenceAt(SENSOR_PA, T0, [[7, 5]]), trafficAt(SENSOR_T, T0 + 1000, 1, 0)],
    });
    expect(await winner.handleMessage(uplinkTopic(HIVE_SERIAL), payload)).toEqual({
      hiveSerial: HIVE_SERIAL,
      ackedSeq: 1,
      ackedAtMs: T0 + 2000,
    });
    expect(await loser.handleMessage(uplinkTopic(HIVE_SERIAL), payload)).toEqual({
      hiveSerial: HIVE_SERIAL,
      ackedSeq: 1,
      ackedAtMs: T0 + 2000,
    });
    expect(winner.counters()).toMatchObject({ batchesProcessed: 1, duplicateBatches: 0, packetsProcessed: 2 });
    expect(loser.counters()).toMatchObject({ batchesProcessed: 0, duplicateBatches: 1, packetsProcessed: 0 });
    expect(await count(url, 'SELECT COUNT(*) AS n FROM batches')).toBe(1);
    await winner.finish();
    await loser.finish();
    expect(await sa.trafficMinutes(SENSOR_T.id)).toEqual([{ sensorId: SENSOR_T.id, minuteMs: T0, in: 1, out: 0 }]);
    await Promise.all([sa.close(), sb.close()]);
  });

  it("runs a deadlock's victim again: two transactions locking two rows in opposite orders both commit", async () => {
    const url = await createDatabase();
    const [a, b] = await Promise.all([PostgresSession.connect(url), PostgresSession.connect(url)]);
    await a.query('CREATE TABLE t (k INT PRIMARY KEY, v INT NOT NULL)');
    await a.query('INSERT INTO t VALUES (1, 0), (2, 0)');
    const bump = (k: number): [string, unknown[]] => ['UPDATE t SET v = v + 1 WHERE k = $1', [k]];
    const pause: [string, unknown[]] = ['SELECT pg_sleep(0.3)', []];
    // Each holds its first row while it waits for the other's: PostgreSQL rolls one back.
    await Promise.all([a.transaction([bump(1), pause, bump(2)]), b.transaction([bump(2), pause, bump(1)])]);
    expect(await a.rows('SELECT k, v FROM t ORDER BY k')).toEqual([
      { k: 1, v: 2 },
      { k: 2, v: 2 },
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it('acks past a batch another process stored meanwhile: the ack never stalls on it', async () => {
    const url = await createDatabase();
    const model = tinyModel();
    const clock = new VirtualClock(T0);
    const [sa, sb] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    const a = new CloudPipeline({
      catalogue: catalogueFromScenario(model),
      tickMs: model.tickMs,
      store: sa,
      clock,
      lookbackMs: 5 * 60_000,
    });
    const b = new CloudPipeline({
      catalogue: catalogueFromScenario(model),
      tickMs: model.tickMs,
      store: sb,
      clock,
      lookbackMs: 5 * 60_000,
    });
    const msg = (seq: number) => encodeUplink({ hiveSerial: HIVE_SERIAL, seq, sentAtMs: T0, packets: [] });
    // Batch 2 reaches process B first (a gap: ack 0); batch 1 then reaches A, which walks over 2.
    expect((await b.handleMessage(uplinkTopic(HIVE_SERIAL), msg(2)))?.ackedSeq).toBe(0);
    expect((await a.handleMessage(uplinkTopic(HIVE_SERIAL), msg(1)))?.ackedSeq).toBe(2);
    // The retransmitted 2 is a duplicate and acked in full.
    expect((await b.handleMessage(uplinkTopic(HIVE_SERIAL), msg(2)))?.ackedSeq).toBe(2);
    await Promise.all([a.finish(), b.finish()]);
    await Promise.all([sa.close(), sb.close()]);
  });
});
