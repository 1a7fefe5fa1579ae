import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { T0 } from '../cloud/fixture.js';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { describeStoreContract } from './store-contract.js';

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-store-'));
  dirs.push(dir);
  return join(dir, 'cloud.db');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('SQLite store', () => {
  it('creates the schema with the numbered migrations and records the version once', () => {
    const path = tempDb();
    new SqliteStore(path).close();
    const store = new SqliteStore(path); // reopening must not re-run any migration
    // The highest number, and one row per migration (the numbers run 1..n without a gap).
    expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)?.version);
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    store.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM schema_version').get()).toEqual({ n: MIGRATIONS.length });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>
    ).map((t) => t.name);
    expect(tables).toEqual(
      expect.arrayContaining([
        'batch_payloads',
        'batches',
        'dead_letters',
        'hive_progress',
        'hive_status',
        'presence_minute',
        'schema_version',
        'sensor_status',
        'traffic_minute',
      ]),
    );
    db.close();
  });

  it('writes a batch with its payload, dead letters and ack progress atomically', () => {
    const store = new SqliteStore(':memory:');
    store.writeBatch({
      hiveSerial: 'HV1',
      seq: 1,
      sentAtMs: T0,
      receivedAtMs: T0 + 10,
      ackedSeq: 1,
      packetCount: 3,
      raw: { payload: Uint8Array.from([9, 9]), minSensedMs: T0, maxSensedMs: T0 + 5000 },
      deadLetters: [
        { receivedAtMs: T0 + 10, topic: 't', reason: 'UNKNOWN_SENSOR', message: 'm', payload: new Uint8Array([1, 2]) },
      ],
    });
    expect(store.hasBatch('HV1', 1)).toBe(true);
    expect(store.hasBatch('HV1', 2)).toBe(false);
    expect(store.ackedSeq('HV1')).toBe(1);
    expect(store.ackedSeq('HV2')).toBe(0);
    expect(store.payloadsSensedIn(T0, T0 + 60_000)).toEqual([
      { hiveSerial: 'HV1', seq: 1, receivedAtMs: T0 + 10, payload: Uint8Array.from([9, 9]) },
    ]);
    expect(store.payloadsSensedIn(T0 + 60_000, T0 + 120_000)).toEqual([]);
    expect(store.deadLetters()).toEqual([
      { receivedAtMs: T0 + 10, topic: 't', reason: 'UNKNOWN_SENSOR', message: 'm', payload: new Uint8Array([1, 2]) },
    ]);
    store.close();
  });

  it('rolls the whole batch back when any part of it fails', () => {
    const store = new SqliteStore(':memory:');
    const write = {
      hiveSerial: 'HV1',
      seq: 1,
      sentAtMs: T0,
      receivedAtMs: T0,
      ackedSeq: 1,
      packetCount: 0,
      raw: { payload: Uint8Array.from([1]), minSensedMs: T0, maxSensedMs: T0 },
      deadLetters: [],
    };
    // Its last part fails: a delivery whose body SQLite cannot bind.
    const delivery = {
      subscriptionId: 's',
      eventId: 'e',
      eventType: 'TRAFFIC',
      eventTimestampMs: T0,
      body: {} as unknown as string,
      enqueuedAtMs: T0,
      nextAttemptMs: T0,
    };
    expect(() => store.writeBatch({ ...write, deliveries: [delivery] })).toThrow();
    expect(store.hasBatch('HV1', 1)).toBe(false);
    expect(store.payloadsSensedIn(T0, T0 + 60_000)).toEqual([]);
    expect(store.ackedSeq('HV1')).toBe(0);
    store.close();
  });

  it('replaces a finalised minute when it is written again and reads minutes in order', () => {
    const store = new SqliteStore(':memory:');
    store.writePresenceMinutes([
      { spaceId: 'room_a', minuteMs: T0 + 60_000, value: 1, samples: 12 },
      { spaceId: 'room_a', minuteMs: T0, value: 2, samples: 12 },
    ]);
    store.writePresenceMinutes([{ spaceId: 'room_a', minuteMs: T0, value: 2.5, samples: 13 }]);
    expect(store.presenceMinutes('room_a')).toEqual([
      { spaceId: 'room_a', minuteMs: T0, value: 2.5, samples: 13 },
      { spaceId: 'room_a', minuteMs: T0 + 60_000, value: 1, samples: 12 },
    ]);
    store.writeTrafficMinutes([{ sensorId: 'sensor_t', minuteMs: T0, in: 3, out: 4 }]);
    expect(store.trafficMinutes('sensor_t')).toEqual([{ sensorId: 'sensor_t', minuteMs: T0, in: 3, out: 4 }]);
    expect(store.trafficMinutes('sensor_other')).toEqual([]);
    store.close();
  });

  it('fails with STORE_FAILED when the file cannot be opened', () => {
    expect(() => new SqliteStore('/nonexistent-dir/x/cloud.db')).toThrow(
      expect.objectContaining({ code: 'STORE_FAILED' }),
    );
  });
});

describe('SQLite presence columns (the reporting fast path)', () => {
  // Doubles whose shortest text is long or extreme: the JSON arrays must carry them bit for bit.
  const awkward = [0.1 + 0.2, 1 / 3, 2 / 3, 1e-7, 123456.789, 5e-324, 0, 7, 2.5, Math.PI];

  it('returns exactly the stored doubles, in minute order, read while another connection writes the file', () => {
    const path = tempDb();
    const writer = new SqliteStore(path);
    const reader = new SqliteStore(path); // the API's own connection, as the platform opens it
    writer.writePresenceMinutes(
      awkward.map((value, i) => ({
        spaceId: 'room_a',
        minuteMs: T0 + (awkward.length - i) * 60_000,
        value,
        samples: 1,
      })),
    );
    const cols = reader.presenceColumns('room_a', T0, T0 + 3_600_000);
    const expected = writer.presenceSeries('room_a', '1m', T0, T0 + 3_600_000);
    expect(Array.from(cols.minuteMs)).toEqual(expected.map((p) => p.bucketMs));
    expect(Array.from(cols.value).every((v, i) => Object.is(v, expected[i]?.value))).toBe(true);
    expect(Array.from(cols.value)).toEqual([...awkward].reverse());
    writer.close();
    reader.close();
  });
});

describeStoreContract('SQLite (in memory)', () => Promise.resolve(sqliteStore(':memory:')));
describeStoreContract('SQLite (WAL file)', () => Promise.resolve(sqliteStore(tempDb())));
