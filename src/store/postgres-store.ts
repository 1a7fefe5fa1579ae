import { AppError, ErrorCodes } from '../core/errors.js';
import type { DeadLetter, Interval, PresenceMinuteRow, TrafficMinuteRow } from './rows.js';
import type {
  AssetRow,
  BatchWrite,
  MinutesWrite,
  HiveStatus,
  OccupancyEvent,
  PresenceColumns,
  RollupBucket,
  SensorHealthWrite,
  SensorStatus,
  SeriesPoint,
  Store,
  StoredDeadLetter,
  StoredEvent,
  StoredPayload,
  ReopenMark,
  TrafficSeriesPoint,
} from './port.js';
import { POSTGRES_MIGRATIONS } from './postgres-schema.js';
import { hiveStatusOf, hiveStatusValues, sensorStatusOf, type HiveStatusTableRow } from './sqlite-status.js';
import { PostgresSession, redactUrl, type SessionOptions } from './postgres-session.js';
import {
  BATCH_SQL,
  EVENTS_SQL,
  ROLLUP_SQL,
  TRAFFIC_ROLLUP_SQL,
  columnsOf,
  deliveryColumns,
  eventColumns,
  lastByKey,
  presenceMinutesStatements,
  trafficMinutesStatements,
} from './postgres-writes.js';

/**
 * The PostgreSQL store (`--store postgres://…`): the `Store` port over one connection. Bulk
 * writes are one statement each, rows passed as arrays and expanded with `unnest` (a batch
 * with its payload, dead letters, last-seen updates and ack progress is one statement, so one
 * round trip and atomic on its own); writes of several statements run in a transaction whose
 * statements are queued together, so no other caller's statement runs inside it. The
 * connection answers in the order it was asked, so awaited calls keep the pipeline's order.
 */
export class PostgresStore implements Store {
  readonly #db: PostgresSession;

  private constructor(db: PostgresSession) {
    this.#db = db;
  }

  /**
   * Connects to `url` and creates or migrates the schema (several processes may race: an advisory
   * lock orders them). With `o.fence`, the aggregation's writes (minutes, events, rollups,
   * pruning, pipeline state, clearing reopen marks) commit only while the partition's lease holds
   * the token (docs/scale-out.md, Failover); storing batches stays anyone's (idempotent by (hive, seq)).
   */
  static async open(url: string, o: SessionOptions = {}): Promise<PostgresStore> {
    const db = await PostgresSession.connect(url, o);
    try {
      await migrate(db);
    } catch (err) {
      await db.close();
      throw new AppError(
        ErrorCodes.STORE_FAILED,
        `cannot migrate the PostgreSQL store ${redactUrl(url)}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return new PostgresStore(db);
  }

  /**
   * A session of its own on the store at `url`, the schema created first when the database is
   * new: what the webhook store, the API state and clearing a store work through.
   */
  static async migratedSession(url: string): Promise<PostgresSession> {
    await (await PostgresStore.open(url)).close();
    return PostgresSession.connect(url);
  }

  async hasBatch(hiveSerial: string, seq: number): Promise<boolean> {
    return (
      (await this.#db.rows('SELECT 1 FROM batches WHERE hive_serial = $1 AND seq = $2', [hiveSerial, seq])).length > 0
    );
  }

  async ackedSeq(hiveSerial: string): Promise<number> {
    const [r] = await this.#db.rows<{ acked_seq: number }>(
      'SELECT acked_seq FROM hive_progress WHERE hive_serial = $1',
      [hiveSerial],
    );
    return r?.acked_seq ?? 0;
  }

  async writeBatch(w: BatchWrite): Promise<boolean> {
    const seen = w.sensorsSeen ?? [];
    const dl = w.deadLetters;
    const r = await this.#db.query(BATCH_SQL, [
      w.hiveSerial,
      w.seq,
      w.sentAtMs,
      w.receivedAtMs,
      w.packetCount,
      w.ackedSeq,
      w.raw ? Buffer.from(w.raw.payload.buffer, w.raw.payload.byteOffset, w.raw.payload.byteLength) : null,
      w.raw?.minSensedMs ?? null,
      w.raw?.maxSensedMs ?? null,
      ...columnsOf(dl, ['receivedAtMs', 'topic', 'reason', 'message']),
      dl.map((d) => Buffer.from(d.payload)),
      ...columnsOf(seen, ['sensorId', 'lastSeenMs']),
      ...deliveryColumns(w.deliveries ?? []),
    ]);
    return r.rowCount === 1;
  }

  async writeMinutes(w: MinutesWrite): Promise<void> {
    const statements = [...presenceMinutesStatements(w.presence), ...trafficMinutesStatements(w.traffic)];
    if (w.events.length > 0) statements.push([EVENTS_SQL, eventColumns(w.events)]);
    await this.#db.fenced(statements);
  }

  async writeDeadLetter(d: DeadLetter): Promise<void> {
    await this.#db.query(
      'INSERT INTO dead_letters (received_at_ms, topic, reason, message, payload) VALUES ($1, $2, $3, $4, $5)',
      [d.receivedAtMs, d.topic, d.reason, d.message, Buffer.from(d.payload)],
    );
  }

  async forgetReceivedFrom(fromMs: number): Promise<number> {
    const [r] = await this.#db.rows<{ forgotten: number }>(FORGET_SQL, [fromMs]);
    return Number(r?.forgotten ?? 0);
  }

  async payloadsSensedIn(fromMs: number, toMs: number): Promise<StoredPayload[]> {
    const rows = await this.#db.rows<{ hive_serial: string; seq: number; payload: Buffer; received_at_ms: number }>(
      'SELECT p.hive_serial, p.seq, p.payload, b.received_at_ms FROM batch_payloads p JOIN batches b ON b.hive_serial = p.hive_serial AND b.seq = p.seq WHERE p.max_sensed_ms >= $1 AND p.min_sensed_ms < $2 ORDER BY p.id',
      [fromMs, toMs],
    );
    return rows.map((r) => ({
      hiveSerial: r.hive_serial,
      seq: Number(r.seq),
      receivedAtMs: Number(r.received_at_ms),
      payload: new Uint8Array(r.payload.buffer, r.payload.byteOffset, r.payload.byteLength),
    }));
  }

  async writePresenceMinutes(rows: readonly PresenceMinuteRow[]): Promise<void> {
    const statements = presenceMinutesStatements(rows);
    if (statements.length > 0) await this.#db.fenced(statements);
  }

  async writeTrafficMinutes(rows: readonly TrafficMinuteRow[]): Promise<void> {
    const statements = trafficMinutesStatements(rows);
    if (statements.length > 0) await this.#db.fenced(statements);
  }

  async presenceMinutes(spaceId: string): Promise<PresenceMinuteRow[]> {
    const rows = await this.#db.rows<{ minute_ms: number; value: number; samples: number }>(
      'SELECT minute_ms, value, samples FROM presence_minute WHERE space_id = $1 ORDER BY minute_ms',
      [spaceId],
    );
    return rows.map((r) => ({ spaceId, minuteMs: r.minute_ms, value: r.value, samples: r.samples }));
  }

  async trafficMinutes(sensorId: string): Promise<TrafficMinuteRow[]> {
    const rows = await this.#db.rows<{ minute_ms: number; in_count: number; out_count: number }>(
      'SELECT minute_ms, in_count, out_count FROM traffic_minute WHERE sensor_id = $1 ORDER BY minute_ms',
      [sensorId],
    );
    return rows.map((r) => ({ sensorId, minuteMs: r.minute_ms, in: r.in_count, out: r.out_count }));
  }

  async deadLetters(): Promise<StoredDeadLetter[]> {
    const rows = await this.#db.rows<{
      received_at_ms: number;
      topic: string;
      reason: string;
      message: string;
      payload: Buffer;
    }>('SELECT received_at_ms, topic, reason, message, payload FROM dead_letters ORDER BY id');
    return rows.map((r) => ({
      receivedAtMs: r.received_at_ms,
      topic: r.topic,
      reason: r.reason,
      message: r.message,
      payload: new Uint8Array(r.payload),
    }));
  }

  async writeAssets(rows: readonly AssetRow[]): Promise<void> {
    const last = lastByKey(rows, (a) => a.id);
    if (last.length === 0) return;
    await this.#db.query(
      `INSERT INTO assets (id, kind, parent_id, name, timezone) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, parent_id = excluded.parent_id, name = excluded.name, timezone = excluded.timezone`,
      columnsOf(last, ['id', 'kind', 'parentId', 'name', 'timezone']),
    );
  }

  async assets(): Promise<AssetRow[]> {
    const rows = await this.#db.rows<{
      id: string;
      kind: AssetRow['kind'];
      parent_id: string | null;
      name: string;
      timezone: string;
    }>('SELECT id, kind, parent_id, name, timezone FROM assets ORDER BY id COLLATE "C"');
    return rows.map((r) => ({ id: r.id, kind: r.kind, parentId: r.parent_id, name: r.name, timezone: r.timezone }));
  }

  async writeEvents(events: readonly OccupancyEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.#db.fenced([[EVENTS_SQL, eventColumns(events)]]);
  }

  async events(afterId = 0): Promise<StoredEvent[]> {
    const rows = await this.#db.rows<{
      id: number;
      event_id: string;
      type: string;
      space_id: string;
      minute_ms: number;
      value: number;
      revision: number;
      emitted_at_ms: number;
    }>(
      'SELECT id, event_id, type, space_id, minute_ms, value, revision, emitted_at_ms FROM events WHERE id > $1 ORDER BY id',
      [afterId],
    );
    return rows.map((r) => ({
      id: r.id,
      eventId: r.event_id,
      type: r.type,
      spaceId: r.space_id,
      minuteMs: r.minute_ms,
      value: r.value,
      revision: r.revision,
      emittedAtMs: r.emitted_at_ms,
    }));
  }

  async lastInstantCounts(beforeMs: number): Promise<Array<{ spaceId: string; value: number }>> {
    const rows = await this.#db.rows<{ space_id: string; value: number }>(
      "SELECT DISTINCT ON (space_id) space_id, value FROM events WHERE minute_ms < $1 AND type IN ('FLOOR_OCCUPANCY', 'ROOM_OCCUPANCY', 'ZONE_OCCUPANCY') ORDER BY space_id, minute_ms DESC",
      [beforeMs],
    );
    return rows.map((r) => ({ spaceId: r.space_id, value: Number(r.value) }));
  }

  async eventCount(fromMs: number, toMs: number): Promise<number> {
    const [r] = await this.#db.rows<{ n: number }>(
      'SELECT count(*) AS n FROM events WHERE minute_ms >= $1 AND minute_ms < $2',
      [fromMs, toMs],
    );
    return r?.n ?? 0;
  }

  async refreshRollups(buckets: readonly RollupBucket[]): Promise<void> {
    const presence = buckets.filter((b) => b.kind !== 'traffic');
    const traffic = buckets.filter((b) => b.kind === 'traffic');
    const args = (bs: readonly RollupBucket[]): unknown[] => columnsOf(bs, ['spaceId', 'level', 'startMs', 'endMs']);
    const statements: Array<[string, unknown[]]> = [];
    if (presence.length > 0) statements.push([ROLLUP_SQL, args(presence)]);
    if (traffic.length > 0) statements.push([TRAFFIC_ROLLUP_SQL, args(traffic)]);
    await this.#db.fenced(statements);
  }

  async presenceSeries(spaceId: string, every: Interval, fromMs: number, toMs: number): Promise<SeriesPoint[]> {
    if (every === '1m') {
      const rows = await this.#db.rows<{ minute_ms: number; value: number }>(
        'SELECT minute_ms, value FROM presence_minute WHERE space_id = $1 AND minute_ms >= $2 AND minute_ms < $3 ORDER BY minute_ms',
        [spaceId, fromMs, toMs],
      );
      return rows.map((r) => ({ bucketMs: r.minute_ms, value: r.value }));
    }
    const rows = await this.#db.rows<{ bucket_ms: number; value: number }>(
      'SELECT bucket_ms, value FROM presence_rollup WHERE space_id = $1 AND every = $2 AND bucket_ms >= $3 AND bucket_ms < $4 ORDER BY bucket_ms',
      [spaceId, every, fromMs, toMs],
    );
    return rows.map((r) => ({ bucketMs: r.bucket_ms, value: r.value }));
  }

  async trafficSeries(sensorId: string, every: Interval, fromMs: number, toMs: number): Promise<TrafficSeriesPoint[]> {
    const rows =
      every === '1m'
        ? await this.#db.rows<{ bucket_ms: number; in_count: number; out_count: number }>(
            'SELECT minute_ms AS bucket_ms, in_count, out_count FROM traffic_minute WHERE sensor_id = $1 AND minute_ms >= $2 AND minute_ms < $3 ORDER BY minute_ms',
            [sensorId, fromMs, toMs],
          )
        : await this.#db.rows<{ bucket_ms: number; in_count: number; out_count: number }>(
            'SELECT bucket_ms, in_count, out_count FROM traffic_rollup WHERE sensor_id = $1 AND every = $2 AND bucket_ms >= $3 AND bucket_ms < $4 ORDER BY bucket_ms',
            [sensorId, every, fromMs, toMs],
          );
    return rows.map((r) => ({ bucketMs: r.bucket_ms, in: r.in_count, out: r.out_count }));
  }

  async prune(cutoffs: Readonly<Partial<Record<Interval, number>>>): Promise<void> {
    const statements: Array<[string, unknown[]]> = [];
    for (const [every, cutoff] of Object.entries(cutoffs)) {
      if (cutoff === undefined || !Number.isFinite(cutoff)) continue;
      if (every === '1m') {
        statements.push(['DELETE FROM presence_minute WHERE minute_ms < $1', [cutoff]]);
        statements.push(['DELETE FROM traffic_minute WHERE minute_ms < $1', [cutoff]]);
        statements.push(['DELETE FROM batch_payloads WHERE max_sensed_ms < $1', [cutoff]]);
        statements.push(['DELETE FROM events WHERE emitted_at_ms < $1', [cutoff]]);
      } else {
        statements.push(['DELETE FROM presence_rollup WHERE every = $1 AND bucket_ms < $2', [every, cutoff]]);
        statements.push(['DELETE FROM traffic_rollup WHERE every = $1 AND bucket_ms < $2', [every, cutoff]]);
      }
    }
    await this.#db.fenced(statements);
  }

  async writeHeartbeat(h: HiveStatus, sensors: readonly SensorHealthWrite[]): Promise<void> {
    const statements: Array<[string, unknown[]]> = [
      [
        `INSERT INTO hive_status (hive_id, hive_serial, last_heartbeat_ms, sent_at_ms, state, firmware_version, protocol_minor, uptime_ms, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (hive_id) DO UPDATE SET hive_serial = excluded.hive_serial, last_heartbeat_ms = excluded.last_heartbeat_ms, sent_at_ms = excluded.sent_at_ms,
           state = excluded.state, firmware_version = excluded.firmware_version, protocol_minor = excluded.protocol_minor, uptime_ms = excluded.uptime_ms, details = excluded.details`,
        hiveStatusValues(h),
      ],
    ];
    const health = lastByKey(sensors, (s) => s.sensorId);
    if (health.length > 0) {
      const cols: Array<keyof SensorHealthWrite> = [
        'sensorId',
        'measuredAtMs',
        'batteryLevel',
        'batteryRuntimeS',
        'rssiDbm',
        'linkPdr',
        'uptimeMs',
        'parent',
        'hops',
        'queueOverflows',
      ];
      statements.push([
        `INSERT INTO sensor_status (hive_serial, sensor_id, last_seen_ms, health_at_ms, battery_level, battery_runtime_s, rssi_dbm, link_pdr, uptime_ms, parent, hops, queue_overflows)
         SELECT $11, s, t, t, b, br, r, l, u, p, h, q FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::bigint[], $5::int[], $6::float8[], $7::bigint[], $8::text[], $9::int[], $10::bigint[])
           AS x(s, t, b, br, r, l, u, p, h, q)
         ORDER BY s COLLATE "C"
         ON CONFLICT (hive_serial, sensor_id) DO UPDATE SET last_seen_ms = GREATEST(sensor_status.last_seen_ms, excluded.last_seen_ms), health_at_ms = excluded.health_at_ms,
           battery_level = excluded.battery_level, battery_runtime_s = excluded.battery_runtime_s, rssi_dbm = excluded.rssi_dbm, link_pdr = excluded.link_pdr,
           uptime_ms = excluded.uptime_ms, parent = excluded.parent, hops = excluded.hops, queue_overflows = excluded.queue_overflows`,
        [...columnsOf(health, cols), h.hiveSerial],
      ]);
    }
    await this.#db.transaction(statements);
  }

  async hiveStatus(hiveId: string): Promise<HiveStatus | null> {
    const [r] = await this.#db.rows<HiveStatusTableRow>('SELECT * FROM hive_status WHERE hive_id = $1', [hiveId]);
    return r ? hiveStatusOf(hiveId, r) : null;
  }

  async sensorStatus(sensorId: string): Promise<SensorStatus | null> {
    const [r] = await this.#db.rows<Record<string, number | string | null>>(SENSOR_STATUSES_SQL, [[sensorId]]);
    return r ? sensorStatusOf(sensorId, r) : null;
  }

  async presenceColumns(spaceId: string, fromMs: number, toMs: number): Promise<PresenceColumns> {
    const rows = await this.#db.rows<{ minute_ms: number; value: number }>(
      'SELECT minute_ms, value FROM presence_minute WHERE space_id = $1 AND minute_ms >= $2 AND minute_ms < $3 ORDER BY minute_ms',
      [spaceId, fromMs, toMs],
    );
    return { minuteMs: Float64Array.from(rows, (r) => r.minute_ms), value: Float64Array.from(rows, (r) => r.value) };
  }

  async hiveStatuses(hiveIds: readonly string[]): Promise<Array<HiveStatus | null>> {
    if (hiveIds.length === 0) return [];
    const rows = await this.#db.rows<HiveStatusTableRow & { hive_id: string }>(
      'SELECT * FROM hive_status WHERE hive_id = ANY($1::text[])',
      [hiveIds],
    );
    const found = new Map(rows.map((r) => [r.hive_id, r] as const));
    return hiveIds.map((id) => {
      const r = found.get(id);
      return r ? hiveStatusOf(id, r) : null;
    });
  }

  async sensorStatuses(sensorIds: readonly string[]): Promise<Array<SensorStatus | null>> {
    if (sensorIds.length === 0) return [];
    const rows = await this.#db.rows<Record<string, number | string | null>>(SENSOR_STATUSES_SQL, [sensorIds]);
    const found = new Map(rows.map((r) => [r.sensor_id as string, r] as const));
    return sensorIds.map((id) => {
      const r = found.get(id);
      return r ? sensorStatusOf(id, r) : null;
    });
  }

  async getState(key: string): Promise<number | undefined> {
    const [r] = await this.#db.rows<{ value: number }>('SELECT value FROM pipeline_state WHERE key = $1', [key]);
    return r?.value;
  }

  async setState(key: string, value: number): Promise<void> {
    await this.#db.fenced([
      [
        'INSERT INTO pipeline_state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        [key, value],
      ],
    ]);
  }

  async markReopen(marks: readonly ReopenMark[]): Promise<void> {
    if (marks.length === 0) return;
    await this.#db.query(
      'INSERT INTO reopen_marks (owner, floor_id, minute_ms) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT DO NOTHING',
      [marks.map((m) => m.owner), marks.map((m) => m.floorId), marks.map((m) => m.minuteMs)],
    );
  }

  async reopenMarks(owner: string): Promise<ReopenMark[]> {
    const rows = await this.#db.rows<{ floor_id: string; minute_ms: number }>(
      'SELECT floor_id, minute_ms FROM reopen_marks WHERE owner = $1 ORDER BY floor_id COLLATE "C", minute_ms',
      [owner],
    );
    return rows.map((r) => ({ owner, floorId: r.floor_id, minuteMs: r.minute_ms }));
  }

  async clearReopenMarks(marks: readonly ReopenMark[]): Promise<void> {
    if (marks.length === 0) return;
    await this.#db.fenced([
      [
        'DELETE FROM reopen_marks r USING unnest($1::text[], $2::text[], $3::bigint[]) AS m (owner, floor_id, minute_ms) WHERE r.owner = m.owner AND r.floor_id = m.floor_id AND r.minute_ms = m.minute_ms',
        [marks.map((m) => m.owner), marks.map((m) => m.floorId), marks.map((m) => m.minuteMs)],
      ],
    ]);
  }

  async close(): Promise<void> {
    await this.#db.close();
  }
}

/**
 * The statuses of the sensors in $1: a sensor has a row per hive that reported it (migration 4),
 * merged as the SQLite store merges them (sqlite-status.ts `mergedStatusRow`): last seen the
 * latest of its rows, health from the row measured last (ties: the greater hive serial).
 */
const SENSOR_STATUSES_SQL = `
  SELECT DISTINCT ON (sensor_id) sensor_id, MAX(last_seen_ms) OVER (PARTITION BY sensor_id) AS last_seen_ms,
    health_at_ms, battery_level, battery_runtime_s, rssi_dbm, link_pdr, uptime_ms, parent, hops, queue_overflows
  FROM sensor_status WHERE sensor_id = ANY($1::text[])
  ORDER BY sensor_id, health_at_ms DESC NULLS LAST, hive_serial COLLATE "C" DESC`;

/**
 * `forgetReceivedFrom` in one statement (one transaction): the hives' first forgotten seqs are
 * read before the batches go, and their acked progress moves back before them.
 */
const FORGET_SQL = `
  WITH gone AS (DELETE FROM batches WHERE received_at_ms >= $1 RETURNING hive_serial, seq),
  firsts AS (SELECT hive_serial, MIN(seq) AS first FROM gone GROUP BY hive_serial),
  payloads AS (DELETE FROM batch_payloads p USING gone g WHERE p.hive_serial = g.hive_serial AND p.seq = g.seq),
  letters AS (DELETE FROM dead_letters WHERE received_at_ms >= $1),
  back AS (UPDATE hive_progress h SET acked_seq = LEAST(h.acked_seq, f.first - 1) FROM firsts f WHERE h.hive_serial = f.hive_serial)
  SELECT COUNT(*)::int AS forgotten FROM gone`;

async function migrate(db: PostgresSession): Promise<void> {
  // Serialises concurrent first starts (several ingest processes on one database).
  await db.query('SELECT pg_advisory_lock(7235047)');
  try {
    await db.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const [row] = await db.rows<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_version');
    const current = row?.v ?? 0;
    for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version > current)) {
      await db.transaction([
        [m.sql, []],
        ['INSERT INTO schema_version (version) VALUES ($1)', [m.version]],
      ]);
    }
  } finally {
    await db.query('SELECT pg_advisory_unlock(7235047)');
  }
}
