/**
 * The PostgreSQL store's schema: the same tables and keys as the SQLite migrations 1–5
 * (migrations.ts), in PostgreSQL types: instants as BIGINT epoch ms, values as DOUBLE
 * PRECISION (the stored doubles exactly, as SQLite's REAL), payloads as BYTEA, ids as identity
 * columns (insertion order, as SQLite's rowid). Append only, like the SQLite list: a released
 * migration is never edited; `schema_version` records the highest applied number.
 */
export interface PostgresMigration {
  version: number;
  description: string;
  sql: string;
}

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    description:
      'the SQLite store migrations 1–5 in one: batches, payloads, minutes, rollups, outbox, status, API state, webhooks',
    sql: `
      CREATE TABLE batches (
        hive_serial TEXT NOT NULL,
        seq BIGINT NOT NULL,
        sent_at_ms BIGINT NOT NULL,
        received_at_ms BIGINT NOT NULL,
        packet_count INTEGER NOT NULL,
        PRIMARY KEY (hive_serial, seq)
      );
      CREATE TABLE hive_progress (hive_serial TEXT PRIMARY KEY, acked_seq BIGINT NOT NULL);
      CREATE TABLE dead_letters (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        received_at_ms BIGINT NOT NULL,
        topic TEXT NOT NULL,
        reason TEXT NOT NULL,
        message TEXT NOT NULL,
        payload BYTEA NOT NULL
      );
      CREATE TABLE presence_minute (
        space_id TEXT NOT NULL,
        minute_ms BIGINT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (space_id, minute_ms)
      );
      CREATE INDEX presence_minute_by_time ON presence_minute (minute_ms);
      CREATE TABLE traffic_minute (
        sensor_id TEXT NOT NULL,
        minute_ms BIGINT NOT NULL,
        in_count INTEGER NOT NULL,
        out_count INTEGER NOT NULL,
        PRIMARY KEY (sensor_id, minute_ms)
      );
      CREATE INDEX traffic_minute_by_time ON traffic_minute (minute_ms);
      CREATE TABLE assets (id TEXT PRIMARY KEY, kind TEXT NOT NULL, parent_id TEXT, name TEXT NOT NULL, timezone TEXT NOT NULL);
      CREATE TABLE presence_rollup (
        space_id TEXT NOT NULL,
        every TEXT NOT NULL,
        bucket_ms BIGINT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        minutes INTEGER NOT NULL,
        PRIMARY KEY (space_id, every, bucket_ms)
      );
      CREATE TABLE events (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        space_id TEXT NOT NULL,
        minute_ms BIGINT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        revision INTEGER NOT NULL,
        emitted_at_ms BIGINT NOT NULL
      );
      CREATE INDEX events_by_time ON events (emitted_at_ms);
      CREATE TABLE pipeline_state (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
      CREATE TABLE batch_payloads (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        hive_serial TEXT NOT NULL,
        seq BIGINT NOT NULL,
        min_sensed_ms BIGINT NOT NULL,
        max_sensed_ms BIGINT NOT NULL,
        payload BYTEA NOT NULL,
        UNIQUE (hive_serial, seq)
      );
      CREATE INDEX batch_payloads_by_end ON batch_payloads (max_sensed_ms);
      CREATE TABLE traffic_rollup (
        sensor_id TEXT NOT NULL,
        every TEXT NOT NULL,
        bucket_ms BIGINT NOT NULL,
        in_count BIGINT NOT NULL,
        out_count BIGINT NOT NULL,
        minutes INTEGER NOT NULL,
        PRIMARY KEY (sensor_id, every, bucket_ms)
      );
      CREATE TABLE hive_status (
        hive_id TEXT PRIMARY KEY,
        hive_serial TEXT NOT NULL,
        last_heartbeat_ms BIGINT NOT NULL,
        sent_at_ms BIGINT NOT NULL,
        state TEXT NOT NULL,
        firmware_version TEXT NOT NULL,
        protocol_minor INTEGER NOT NULL,
        uptime_ms BIGINT NOT NULL,
        details TEXT NOT NULL
      );
      CREATE TABLE sensor_status (
        sensor_id TEXT PRIMARY KEY,
        last_seen_ms BIGINT NOT NULL,
        health_at_ms BIGINT,
        battery_level DOUBLE PRECISION,
        battery_runtime_s BIGINT,
        rssi_dbm DOUBLE PRECISION,
        link_pdr DOUBLE PRECISION,
        uptime_ms BIGINT,
        parent TEXT,
        hops INTEGER,
        queue_overflows BIGINT
      );
      CREATE TABLE api_clients (
        client_id TEXT PRIMARY KEY,
        org_id TEXT, name TEXT, description TEXT, hash TEXT, scopes TEXT, created_by TEXT,
        deleted INTEGER NOT NULL DEFAULT 0,
        seq BIGINT GENERATED ALWAYS AS IDENTITY
      );
      CREATE TABLE api_overlays (org_id TEXT PRIMARY KEY, overlay TEXT NOT NULL);
      CREATE TABLE webhook_subscriptions (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, body TEXT NOT NULL, seq BIGINT NOT NULL);
      CREATE TABLE webhook_deliveries (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        subscription_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        event_ts_ms BIGINT NOT NULL,
        body TEXT NOT NULL,
        enqueued_at_ms BIGINT NOT NULL,
        next_attempt_ms BIGINT NOT NULL,
        attempts INTEGER NOT NULL,
        state TEXT NOT NULL,
        last_error TEXT,
        delivered_at_ms BIGINT,
        UNIQUE (subscription_id, event_id)
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (subscription_id, state, next_attempt_ms, event_ts_ms, event_id);
      CREATE INDEX webhook_deliveries_by_event_time ON webhook_deliveries (event_ts_ms);
    `,
  },
  {
    version: 2,
    description:
      'the SQLite store migration 6: the due index over pending deliveries only; send_on_value_change last values',
    sql: `
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (subscription_id, next_attempt_ms, event_ts_ms, event_id COLLATE "C") WHERE state = 'pending';
      CREATE TABLE webhook_last_values (
        subscription_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (subscription_id, subject)
      );
    `,
  },
  {
    version: 3,
    description:
      'the SQLite store migration 7: delivery bodies in a table of their own; deliveries unique by (subscription, event time, event id)',
    sql: `
      -- The body, written once, leaves the row every outcome rewrites (an UPDATE writes a new
      -- tuple: a small one now). Same id as its delivery, deleted with it.
      CREATE TABLE webhook_delivery_bodies (
        id BIGINT PRIMARY KEY REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        body TEXT NOT NULL
      );
      INSERT INTO webhook_delivery_bodies (id, body) SELECT id, body FROM webhook_deliveries;
      ALTER TABLE webhook_deliveries DROP COLUMN body;
      -- The same repeat check (an event id hashes the event's time), in time order.
      ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_subscription_id_event_id_key;
      ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event UNIQUE (subscription_id, event_ts_ms, event_id);
    `,
  },
  {
    version: 4,
    description: 'the SQLite store migration 8: sensor status keyed by (hive, sensor)',
    sql: `
      -- A batch's or heartbeat's rows become neighbours in the key's B-tree instead of ~40
      -- random leaf pages (sensor ids are hashes). Rows from before carry the hive ''; reads
      -- merge a sensor's rows (last seen: the latest; health: the one measured last).
      ALTER TABLE sensor_status ADD COLUMN hive_serial TEXT NOT NULL DEFAULT '';
      ALTER TABLE sensor_status ALTER COLUMN hive_serial DROP DEFAULT;
      ALTER TABLE sensor_status DROP CONSTRAINT sensor_status_pkey;
      ALTER TABLE sensor_status ADD PRIMARY KEY (hive_serial, sensor_id);
      CREATE INDEX sensor_status_by_sensor ON sensor_status (sensor_id);
      `,
  },
  {
    version: 5,
    description: 'the SQLite store migration 9: reopen marks',
    sql: `
      CREATE TABLE reopen_marks (
        owner TEXT NOT NULL,
        floor_id TEXT NOT NULL,
        minute_ms BIGINT NOT NULL,
        PRIMARY KEY (owner, floor_id, minute_ms)
      );
    `,
  },
  {
    version: 6,
    description: 'the SQLite store migration 10: one outbox row per event id',
    sql: `
      DELETE FROM events WHERE id NOT IN (SELECT MIN(id) FROM events GROUP BY event_id);
      CREATE UNIQUE INDEX events_by_event_id ON events (event_id);
    `,
  },
  {
    version: 7,
    description:
      'partition leases: which ingest process aggregates which floor partition, with a fencing token (docs/scale-out.md, Failover)',
    sql: `
      CREATE TABLE partition_leases (
        partition TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        token BIGINT NOT NULL,
        acquired_at TIMESTAMPTZ NOT NULL,
        renewed_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      );
    `,
  },
  {
    version: 8,
    description:
      "a sensor's RSSI as an integer, as the protocol's sint32 and the SQLite column (found by test/store/schema-parity.test.ts)",
    sql: `
      ALTER TABLE sensor_status ALTER COLUMN rssi_dbm TYPE INTEGER USING round(rssi_dbm)::integer;
    `,
  },
];

/** Every table of the schema, for `--fresh` (emptied, not dropped: the schema version stays). */
export const POSTGRES_TABLES = [
  'batches',
  'hive_progress',
  'dead_letters',
  'presence_minute',
  'traffic_minute',
  'assets',
  'presence_rollup',
  'events',
  'pipeline_state',
  'batch_payloads',
  'traffic_rollup',
  'hive_status',
  'sensor_status',
  'api_clients',
  'api_overlays',
  'webhook_subscriptions',
  'webhook_deliveries',
  'webhook_delivery_bodies',
  'webhook_last_values',
  'reopen_marks',
  'partition_leases',
] as const;
