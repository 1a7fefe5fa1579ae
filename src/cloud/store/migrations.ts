/**
 * Numbered schema migrations of the SQLite store. Append only: a released migration is
 * never edited; `schema_version` records the highest applied number.
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'batches, raw packets, dead letters, per-minute presence and traffic',
    sql: `
      CREATE TABLE batches (
        hive_serial TEXT NOT NULL,
        seq INTEGER NOT NULL,
        sent_at_ms INTEGER NOT NULL,
        received_at_ms INTEGER NOT NULL,
        packet_count INTEGER NOT NULL,
        PRIMARY KEY (hive_serial, seq)
      ) WITHOUT ROWID;
      CREATE TABLE hive_progress (
        hive_serial TEXT PRIMARY KEY,
        acked_seq INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE detections (
        sensor_id TEXT NOT NULL,
        sensed_at_ms INTEGER NOT NULL,
        hive_serial TEXT NOT NULL,
        seq INTEGER NOT NULL,
        points TEXT NOT NULL -- JSON [[x, y], ...], sensor-local normalised, as received
      );
      CREATE INDEX detections_by_time ON detections (sensed_at_ms);
      CREATE TABLE traffic_samples (
        sensor_id TEXT NOT NULL,
        sensed_at_ms INTEGER NOT NULL,
        interval_ms INTEGER NOT NULL,
        in_count INTEGER NOT NULL,
        out_count INTEGER NOT NULL,
        hive_serial TEXT NOT NULL,
        seq INTEGER NOT NULL
      );
      CREATE INDEX traffic_samples_by_time ON traffic_samples (sensed_at_ms);
      CREATE TABLE dead_letters (
        id INTEGER PRIMARY KEY,
        received_at_ms INTEGER NOT NULL,
        topic TEXT NOT NULL,
        reason TEXT NOT NULL,
        message TEXT NOT NULL,
        payload BLOB NOT NULL
      );
      CREATE TABLE presence_minute (
        space_id TEXT NOT NULL,
        minute_ms INTEGER NOT NULL,
        value REAL NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (space_id, minute_ms)
      ) WITHOUT ROWID;
      CREATE TABLE traffic_minute (
        sensor_id TEXT NOT NULL,
        minute_ms INTEGER NOT NULL,
        in_count INTEGER NOT NULL,
        out_count INTEGER NOT NULL,
        PRIMARY KEY (sensor_id, minute_ms)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    description: 'assets, rollups (5m–1d, local-time buckets), occupancy event outbox',
    sql: `
      CREATE TABLE assets (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        parent_id TEXT,
        name TEXT NOT NULL,
        timezone TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE presence_rollup (
        space_id TEXT NOT NULL,
        every TEXT NOT NULL,
        bucket_ms INTEGER NOT NULL,
        value REAL NOT NULL, -- max of the bucket's minute values (spec §4.4: max for occupancy)
        minutes INTEGER NOT NULL,
        PRIMARY KEY (space_id, every, bucket_ms)
      ) WITHOUT ROWID;
      CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        space_id TEXT NOT NULL,
        minute_ms INTEGER NOT NULL,
        value REAL NOT NULL,
        revision INTEGER NOT NULL,
        emitted_at_ms INTEGER NOT NULL
      );
      CREATE TABLE pipeline_state (
        key TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
];
