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
  {
    version: 3,
    description: 'raw batches as one payload each (no row per packet), latest hive and sensor status',
    sql: `
      -- The accepted uplink as received, once per (hive, seq), with the span of its sensing
      -- instants: crash recovery and late-data reopening re-read the payloads covering a span.
      CREATE TABLE batch_payloads (
        id INTEGER PRIMARY KEY,
        hive_serial TEXT NOT NULL,
        seq INTEGER NOT NULL,
        min_sensed_ms INTEGER NOT NULL,
        max_sensed_ms INTEGER NOT NULL,
        payload BLOB NOT NULL,
        UNIQUE (hive_serial, seq)
      );
      CREATE INDEX batch_payloads_by_end ON batch_payloads (max_sensed_ms);
      -- Deterministic spec §6 id (event_<hash>); minute_ms is the event's timestamp (the
      -- instant for FLOOR/ROOM/ZONE_OCCUPANCY). Pruned with the 1m retention.
      ALTER TABLE events ADD COLUMN event_id TEXT NOT NULL DEFAULT '';
      CREATE INDEX events_by_time ON events (emitted_at_ms);
      CREATE TABLE traffic_rollup (
        sensor_id TEXT NOT NULL,
        every TEXT NOT NULL,
        bucket_ms INTEGER NOT NULL, -- local-time aligned, like presence_rollup
        in_count INTEGER NOT NULL,  -- sums of the bucket's minutes
        out_count INTEGER NOT NULL,
        minutes INTEGER NOT NULL,
        PRIMARY KEY (sensor_id, every, bucket_ms)
      ) WITHOUT ROWID;
      CREATE TABLE hive_status (
        hive_id TEXT PRIMARY KEY,
        hive_serial TEXT NOT NULL,
        last_heartbeat_ms INTEGER NOT NULL,
        sent_at_ms INTEGER NOT NULL,
        state TEXT NOT NULL,
        firmware_version TEXT NOT NULL,
        protocol_minor INTEGER NOT NULL,
        uptime_ms INTEGER NOT NULL,
        details TEXT NOT NULL -- JSON of the remaining heartbeat fields
      ) WITHOUT ROWID;
      CREATE TABLE sensor_status (
        sensor_id TEXT PRIMARY KEY,
        last_seen_ms INTEGER NOT NULL,
        health_at_ms INTEGER,
        battery_level REAL,
        battery_runtime_s INTEGER,
        rssi_dbm INTEGER,
        link_pdr REAL,
        uptime_ms INTEGER,
        parent TEXT,
        hops INTEGER,
        queue_overflows INTEGER
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    description: 'API state: clients created or deleted through the API, asset overlays of GraphQL mutations',
    sql: `
      CREATE TABLE api_clients (
        client_id TEXT PRIMARY KEY,
        org_id TEXT,
        name TEXT,
        description TEXT,
        hash TEXT,
        scopes TEXT,
        created_by TEXT,
        deleted INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE api_overlays (
        org_id TEXT PRIMARY KEY,
        overlay TEXT NOT NULL
      );
    `,
  },
  {
    version: 5,
    description: 'webhook subscriptions and the durable delivery outbox with dead letters',
    sql: `
      CREATE TABLE webhook_subscriptions (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL,
        body TEXT NOT NULL, -- JSON of the subscription (webhooks/subscription.ts)
        seq INTEGER NOT NULL -- creation order: listings and delivery rounds in a stable order
      );
      -- One row per (subscription, event): the body is stored as sent, so every attempt and a
      -- replay send the same bytes. state: pending → delivered | dead (dead letters).
      CREATE TABLE webhook_deliveries (
        id INTEGER PRIMARY KEY,
        subscription_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        event_ts_ms INTEGER NOT NULL,
        body TEXT NOT NULL,
        enqueued_at_ms INTEGER NOT NULL,
        next_attempt_ms INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        state TEXT NOT NULL,
        last_error TEXT,
        delivered_at_ms INTEGER,
        UNIQUE (subscription_id, event_id)
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (subscription_id, state, next_attempt_ms, event_ts_ms, event_id);
      CREATE INDEX webhook_deliveries_by_event_time ON webhook_deliveries (event_ts_ms);
    `,
  },
  {
    version: 6,
    description: 'webhooks: the due index over pending deliveries only; send_on_value_change last values',
    sql: `
      -- Only pending rows are ever looked up by due order: a delivered row leaves the index (one
      -- delete) instead of moving inside it, and the index stays the size of the backlog.
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (subscription_id, next_attempt_ms, event_ts_ms, event_id) WHERE state = 'pending';
      -- The last value sent per subscription and subject (type|space or sensor), JSON of the
      -- event's data: a restarted platform does not resend an unchanged value.
      CREATE TABLE webhook_last_values (
        subscription_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (subscription_id, subject)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 7,
    description: 'webhooks: bodies in a table of their own; deliveries unique by (subscription, event time, event id)',
    sql: `
      -- The body (~600 bytes, written once) leaves the delivery row, which every outcome
      -- rewrites: a round's delivered UPDATE rewrites small rows instead of whole bodies.
      -- Same id as its delivery; deleted with it by the trigger below.
      CREATE TABLE webhook_delivery_bodies (
        id INTEGER PRIMARY KEY,
        body TEXT NOT NULL
      );
      INSERT INTO webhook_delivery_bodies (id, body) SELECT id, body FROM webhook_deliveries;
      -- The repeat check keys by (subscription, event time, event id): an event id is a hash
      -- that includes the event's time, so it is the same check, but in time order new rows
      -- append at the end of the index instead of landing at random places (the hash) in it;
      -- it also serves the by-time operations (prune, replay of a range) per subscription, so
      -- the separate event-time index goes.
      CREATE TABLE webhook_deliveries_7 (
        id INTEGER PRIMARY KEY,
        subscription_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        event_ts_ms INTEGER NOT NULL,
        enqueued_at_ms INTEGER NOT NULL,
        next_attempt_ms INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        state TEXT NOT NULL,
        last_error TEXT,
        delivered_at_ms INTEGER,
        UNIQUE (subscription_id, event_ts_ms, event_id)
      );
      INSERT INTO webhook_deliveries_7 (id, subscription_id, event_id, event_type, event_ts_ms, enqueued_at_ms, next_attempt_ms, attempts, state, last_error, delivered_at_ms)
        SELECT id, subscription_id, event_id, event_type, event_ts_ms, enqueued_at_ms, next_attempt_ms, attempts, state, last_error, delivered_at_ms FROM webhook_deliveries ORDER BY id;
      DROP TABLE webhook_deliveries;
      ALTER TABLE webhook_deliveries_7 RENAME TO webhook_deliveries;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (subscription_id, next_attempt_ms, event_ts_ms, event_id) WHERE state = 'pending';
      CREATE TRIGGER webhook_deliveries_body AFTER DELETE ON webhook_deliveries BEGIN
        DELETE FROM webhook_delivery_bodies WHERE id = old.id;
      END;
    `,
  },
  {
    version: 8,
    description: "sensor status keyed by (hive, sensor): a batch or heartbeat rewrites its hive's few pages",
    sql: `
      -- Sensor ids are hashes: keyed by sensor alone, a hive's ~40 sensors sit on ~40 random
      -- pages, and every batch dirtied (and its commit wrote to the log) all of them. Keyed by
      -- the hive that reported them, they are neighbours. A sensor reported by several hives
      -- (rows written before this migration carry the hive '') has a row per hive: reads
      -- merge them (last seen: the latest of any; health: the one measured last).
      CREATE TABLE sensor_status_8 (
        hive_serial TEXT NOT NULL,
        sensor_id TEXT NOT NULL,
        last_seen_ms INTEGER NOT NULL,
        health_at_ms INTEGER,
        battery_level REAL,
        battery_runtime_s INTEGER,
        rssi_dbm INTEGER,
        link_pdr REAL,
        uptime_ms INTEGER,
        parent TEXT,
        hops INTEGER,
        queue_overflows INTEGER,
        PRIMARY KEY (hive_serial, sensor_id)
      ) WITHOUT ROWID;
      INSERT INTO sensor_status_8 (hive_serial, sensor_id, last_seen_ms, health_at_ms, battery_level, battery_runtime_s, rssi_dbm, link_pdr, uptime_ms, parent, hops, queue_overflows)
        SELECT '', sensor_id, last_seen_ms, health_at_ms, battery_level, battery_runtime_s, rssi_dbm, link_pdr, uptime_ms, parent, hops, queue_overflows FROM sensor_status;
      DROP TABLE sensor_status;
      ALTER TABLE sensor_status_8 RENAME TO sensor_status;
      -- Reads by sensor id; a row's first write adds its entry, later updates leave it alone.
      CREATE INDEX sensor_status_by_sensor ON sensor_status (sensor_id);
      `,
  },
  {
    version: 9,
    description: 'reopen marks: late data for a minute its floor owner finalised, stored by another ingest process',
    sql: `
      CREATE TABLE reopen_marks (
        owner TEXT NOT NULL,
        floor_id TEXT NOT NULL,
        minute_ms INTEGER NOT NULL,
        PRIMARY KEY (owner, floor_id, minute_ms)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 10,
    description:
      'one outbox row per event id: a run resumed after a crash emits again what it emitted before, stored once',
    sql: `
      DELETE FROM events WHERE id NOT IN (SELECT MIN(id) FROM events GROUP BY event_id);
      CREATE UNIQUE INDEX events_by_event_id ON events (event_id);
    `,
  },
];
