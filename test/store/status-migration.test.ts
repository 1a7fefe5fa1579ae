import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import type { SensorHealthWrite, SensorStatus } from '../../src/store/port.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-schema.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { postgresPerFile } from '../support/postgres-per-file.js';

/**
 * A store written before sensor status was keyed by (hive, sensor) (SQLite migration 8,
 * PostgreSQL 4) keeps every sensor's status through the migration; afterwards the rows the
 * hives write beside the old ones merge with them: last seen the latest of any row, health the
 * one measured last.
 */
const dir = mkdtempSync(join(tmpdir(), 'occusim-status-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T = Date.UTC(2026, 2, 3, 9);
const COLUMNS =
  'sensor_id, last_seen_ms, health_at_ms, battery_level, battery_runtime_s, rssi_dbm, link_pdr, uptime_ms, parent, hops, queue_overflows';
// As the old schema held them: health and a later data packet; data only; health only.
const OLD_ROWS = [
  ['sensor_a', T + 5000, T, 0.5, 86_400, -70, 0.97, 500, 'HV1', 1, 0],
  ['sensor_b', T + 1000, null, null, null, null, null, null, null, null, null],
  ['sensor_c', T - 10, T - 10, 0.25, 3600, -80, 0.5, 100, 'sensor_a', 2, 3],
] as const;

const none = {
  healthAtMs: null,
  batteryLevel: null,
  batteryRuntimeS: null,
  rssiDbm: null,
  linkPdr: null,
  uptimeMs: null,
  parent: null,
  hops: null,
  queueOverflows: null,
};
const statusA: SensorStatus = {
  sensorId: 'sensor_a',
  lastSeenMs: T + 5000,
  healthAtMs: T,
  batteryLevel: 0.5,
  batteryRuntimeS: 86_400,
  rssiDbm: -70,
  linkPdr: 0.97,
  uptimeMs: 500,
  parent: 'HV1',
  hops: 1,
  queueOverflows: 0,
};
const statusB: SensorStatus = { sensorId: 'sensor_b', lastSeenMs: T + 1000, ...none };
const statusC: SensorStatus = {
  sensorId: 'sensor_c',
  lastSeenMs: T - 10,
  healthAtMs: T - 10,
  batteryLevel: 0.25,
  batteryRuntimeS: 3600,
  rssiDbm: -80,
  linkPdr: 0.5,
  uptimeMs: 100,
  parent: 'sensor_a',
  hops: 2,
  queueOverflows: 3,
};
const hb = {
  hiveId: 'hive_1',
  hiveSerial: 'HV1',
  lastHeartbeatMs: T,
  sentAtMs: T,
  state: 'streaming' as const,
  firmwareVersion: '1.4.2',
  protocolMinor: 1,
  uptimeMs: 1000,
  netPathStability: 1,
  ackedSeq: 1,
  nextSeq: 2,
  bufferedBatches: 0,
  bufferedBytes: 0,
  droppedPackets: 0,
};
const health = (sensorId: string, measuredAtMs: number, batteryLevel: number): SensorHealthWrite => ({
  sensorId,
  measuredAtMs,
  batteryLevel,
  batteryRuntimeS: 10,
  rssiDbm: -60,
  linkPdr: 1,
  uptimeMs: 7,
  parent: 'HV1',
  hops: 1,
  queueOverflows: 0,
});

interface StatusStore {
  sensorStatus(id: string): Promise<SensorStatus | null> | SensorStatus | null;
  sensorStatuses(
    ids: readonly string[],
  ): Promise<ReadonlyArray<SensorStatus | null>> | ReadonlyArray<SensorStatus | null>;
  writeBatch(w: Parameters<SqliteStore['writeBatch']>[0]): Promise<boolean> | boolean;
  writeHeartbeat(h: typeof hb, sensors: readonly SensorHealthWrite[]): Promise<void> | void;
}

async function expectMigrated(s: StatusStore): Promise<void> {
  const ids = ['sensor_c', 'sensor_none', 'sensor_a', 'sensor_b'];
  expect(await s.sensorStatuses(ids)).toEqual([statusC, null, statusA, statusB]);
  expect(await s.sensorStatus('sensor_a')).toEqual(statusA);
  // The hive's rows from now on: a packet older than the old last seen does not move it back; a newer one does.
  await s.writeBatch({
    hiveSerial: 'HV1',
    seq: 1,
    sentAtMs: T,
    receivedAtMs: T,
    ackedSeq: 1,
    packetCount: 2,
    raw: null,
    deadLetters: [],
    sensorsSeen: [
      { sensorId: 'sensor_a', lastSeenMs: T + 10 },
      { sensorId: 'sensor_b', lastSeenMs: T + 9000 },
    ],
  });
  // Health measured after the old row's replaces it; health measured before it does not.
  await s.writeHeartbeat(hb, [health('sensor_a', T + 20, 0.4), health('sensor_c', T - 20, 0.9)]);
  expect(await s.sensorStatuses(ids)).toEqual([
    statusC,
    null,
    {
      ...statusA,
      healthAtMs: T + 20,
      batteryLevel: 0.4,
      batteryRuntimeS: 10,
      rssiDbm: -60,
      linkPdr: 1,
      uptimeMs: 7,
      parent: 'HV1',
      hops: 1,
      queueOverflows: 0,
    },
    { ...statusB, lastSeenMs: T + 9000 },
  ]);
  expect(await s.sensorStatus('sensor_b')).toEqual({ ...statusB, lastSeenMs: T + 9000 });
  // The same hive's next heartbeat replaces its row's health, as before the migration.
  await s.writeHeartbeat(hb, [health('sensor_a', T + 15, 0.3)]);
  expect((await s.sensorStatus('sensor_a'))?.batteryLevel).toBe(0.3);
}

describe('sensor status migration to the (hive, sensor) key', () => {
  it('SQLite: a store at migration 7 migrates with its sensor statuses intact', async () => {
    const path = join(dir, 'old.db');
    const db = new Database(path);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
    for (const m of MIGRATIONS.filter((x) => x.version <= 7)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(m.version);
    }
    const insert = db.prepare(`INSERT INTO sensor_status (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const r of OLD_ROWS) insert.run(...r);
    db.close();
    const s = new SqliteStore(path);
    try {
      expect(s.schemaVersion()).toBe(MIGRATIONS.at(-1)?.version);
      await expectMigrated(s);
    } finally {
      s.close();
    }
    const check = new Database(path, { readonly: true });
    // Keyed by hive then sensor (old rows under the hive ''), read through the sensor index.
    expect(
      check.prepare('SELECT hive_serial, sensor_id FROM sensor_status ORDER BY hive_serial, sensor_id').all(),
    ).toEqual([
      { hive_serial: '', sensor_id: 'sensor_a' },
      { hive_serial: '', sensor_id: 'sensor_b' },
      { hive_serial: '', sensor_id: 'sensor_c' },
      { hive_serial: 'HV1', sensor_id: 'sensor_a' },
      { hive_serial: 'HV1', sensor_id: 'sensor_b' },
      { hive_serial: 'HV1', sensor_id: 'sensor_c' },
    ]);
    expect(
      check
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sensor_status' AND sql IS NOT NULL",
        )
        .all(),
    ).toEqual([{ name: 'sensor_status_by_sensor' }]);
    check.close();
  });

  const { skip, createDatabase } = postgresPerFile();
  it.skipIf(skip !== null)(
    `PostgreSQL: a database at migration 3 migrates with its sensor statuses intact${skip ? ` (skipped: ${skip})` : ''}`,
    async () => {
      const url = await createDatabase();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('CREATE TABLE schema_version (version INTEGER NOT NULL)');
        for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version <= 3)) {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_version (version) VALUES ($1)', [m.version]);
        }
        for (const r of OLD_ROWS)
          await client.query(
            `INSERT INTO sensor_status (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
            [...r],
          );
      } finally {
        await client.end();
      }
      const s = await PostgresStore.open(url);
      try {
        await expectMigrated(s);
      } finally {
        await s.close();
      }
    },
  );
});
