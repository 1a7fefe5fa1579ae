import type { OccupancyEvent } from './port.js';
import type { PresenceMinuteRow, TrafficMinuteRow } from './rows.js';
import type { DeliveryInsert } from './webhook-port.js';

/**
 * The PostgreSQL store's bulk statements: rows travel as one array per column, expanded by
 * `unnest` (WITH ORDINALITY where the insertion order gives ids), so a write of any size is
 * one statement and one round trip.
 */

/**
 * The CTEs `delivery_rows`, `deliveries` and `delivery_bodies`: webhook deliveries from seven
 * array parameters from `$first` on (deliveryColumns' order), inserted where `guard` holds.
 * A repeated (subscription, event) is skipped; the body of each inserted delivery, same id, is
 * the first of the call's rows for it (a repeat within the call keeps its first body, as
 * SQLite's insert does). BATCH_SQL and postgres-webhooks.ts's ENQUEUE_SQL both insert so.
 */
export function deliveryInsertCtes(first: number, guard: string): string {
  const [s, e, t, ts, b, q, n] = [0, 1, 2, 3, 4, 5, 6].map((i) => `$${first + i}`);
  return `delivery_rows AS (
  SELECT * FROM unnest(${s}::text[], ${e}::text[], ${t}::text[], ${ts}::bigint[], ${b}::text[], ${q}::bigint[], ${n}::bigint[]) WITH ORDINALITY AS x(s, e, t, ts, b, q, n, o)
), deliveries AS (
  INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, event_ts_ms, enqueued_at_ms, next_attempt_ms, attempts, state)
  SELECT s, e, t, ts, q, n, 0, 'pending' FROM delivery_rows ${guard} ORDER BY o
  ON CONFLICT (subscription_id, event_ts_ms, event_id) DO NOTHING
  RETURNING id, subscription_id, event_ts_ms, event_id
), delivery_bodies AS (
  INSERT INTO webhook_delivery_bodies (id, body)
  SELECT DISTINCT ON (d.id) d.id, x.b FROM deliveries d JOIN delivery_rows x ON x.s = d.subscription_id AND x.ts = d.event_ts_ms AND x.e = d.event_id ORDER BY d.id, x.o
)`;
}

/**
 * One accepted uplink batch, atomically (one statement: its data-modifying parts commit
 * together): the batch row, its payload when it holds accepted packets, its packet dead
 * letters in order, the sensors' last seen (only forward) and the hive's ack progress (only
 * forward: processes sharing the store may finish out of order).
 * $1 serial, $2 seq, $3 sent, $4 received, $5 packet count, $6 acked seq, $7–$9 payload and
 * its sensing span (null: none), $10–$14 dead letters, $15–$16 sensors seen, $17–$23 webhook
 * deliveries of its DETECTIONS/TRAFFIC events (a repeated (subscription, event) is ignored).
 *
 * Another ingest process may store the same `(hive, seq)` between our `hasBatch` and this
 * statement: the batch insert then does nothing (PostgreSQL waits for the other transaction
 * and sees its row), every other part is conditional on `batch` having inserted, and the
 * statement returns no row — the caller re-acks a duplicate. One row: stored.
 *
 * Rows several processes may update at once are locked in one order, by key (`sensor_status`
 * by (hive, sensor id): one hive per statement, sensor ids in order, here and in heartbeats),
 * so two processes' writes wait for each other instead of deadlocking.
 */
export const BATCH_SQL = `
WITH batch AS (
  INSERT INTO batches (hive_serial, seq, sent_at_ms, received_at_ms, packet_count) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (hive_serial, seq) DO NOTHING RETURNING 1
), payload AS (
  INSERT INTO batch_payloads (hive_serial, seq, min_sensed_ms, max_sensed_ms, payload)
  SELECT $1, $2, $8::bigint, $9::bigint, $7::bytea WHERE $7::bytea IS NOT NULL AND EXISTS (SELECT 1 FROM batch)
), dead AS (
  INSERT INTO dead_letters (received_at_ms, topic, reason, message, payload)
  SELECT r, t, re, m, p FROM unnest($10::bigint[], $11::text[], $12::text[], $13::text[], $14::bytea[]) WITH ORDINALITY AS x(r, t, re, m, p, n)
  WHERE EXISTS (SELECT 1 FROM batch) ORDER BY n
), seen AS (
  INSERT INTO sensor_status (hive_serial, sensor_id, last_seen_ms) SELECT $1, s, t FROM unnest($15::text[], $16::bigint[]) AS x(s, t) WHERE EXISTS (SELECT 1 FROM batch)
  ORDER BY s COLLATE "C"
  ON CONFLICT (hive_serial, sensor_id) DO UPDATE SET last_seen_ms = GREATEST(sensor_status.last_seen_ms, excluded.last_seen_ms)
), ${deliveryInsertCtes(17, 'WHERE EXISTS (SELECT 1 FROM batch)')}
INSERT INTO hive_progress (hive_serial, acked_seq) SELECT $1, $6::bigint WHERE EXISTS (SELECT 1 FROM batch)
ON CONFLICT (hive_serial) DO UPDATE SET acked_seq = GREATEST(hive_progress.acked_seq, excluded.acked_seq)
RETURNING 1`;

export const PRESENCE_MINUTES_SQL = `
INSERT INTO presence_minute (space_id, minute_ms, value, samples)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::int[])
ON CONFLICT (space_id, minute_ms) DO UPDATE SET value = excluded.value, samples = excluded.samples`;

export const TRAFFIC_MINUTES_SQL = `
INSERT INTO traffic_minute (sensor_id, minute_ms, in_count, out_count)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[], $4::int[])
ON CONFLICT (sensor_id, minute_ms) DO UPDATE SET in_count = excluded.in_count, out_count = excluded.out_count`;

export const EVENTS_SQL = `
INSERT INTO events (event_id, type, space_id, minute_ms, value, revision, emitted_at_ms)
SELECT e, t, s, m, v, r, at FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::float8[], $6::int[], $7::bigint[])
  WITH ORDINALITY AS x(e, t, s, m, v, r, at, n) ORDER BY n
ON CONFLICT (event_id) DO NOTHING`;

// A bucket whose minutes were all pruned keeps its last value: the join yields no row for it.
export const ROLLUP_SQL = `
INSERT INTO presence_rollup (space_id, every, bucket_ms, value, minutes)
SELECT b.s, b.e, b.st, MAX(m.value), COUNT(*) FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS b(s, e, st, en)
  JOIN presence_minute m ON m.space_id = b.s AND m.minute_ms >= b.st AND m.minute_ms < b.en
GROUP BY b.s, b.e, b.st
ON CONFLICT (space_id, every, bucket_ms) DO UPDATE SET value = excluded.value, minutes = excluded.minutes`;

export const TRAFFIC_ROLLUP_SQL = `
INSERT INTO traffic_rollup (sensor_id, every, bucket_ms, in_count, out_count, minutes)
SELECT b.s, b.e, b.st, SUM(m.in_count), SUM(m.out_count), COUNT(*) FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS b(s, e, st, en)
  JOIN traffic_minute m ON m.sensor_id = b.s AND m.minute_ms >= b.st AND m.minute_ms < b.en
GROUP BY b.s, b.e, b.st
ON CONFLICT (sensor_id, every, bucket_ms) DO UPDATE SET in_count = excluded.in_count, out_count = excluded.out_count, minutes = excluded.minutes`;

/** The rows with the last one of each key kept, in the order of their last occurrence. */
export function lastByKey<T>(rows: readonly T[], key: (r: T) => string): T[] {
  const last = new Map<string, T>();
  for (const r of rows) {
    const k = key(r);
    last.delete(k);
    last.set(k, r);
  }
  return [...last.values()];
}

/** The rows as one array per key, in the order of `keys`: the columns `unnest` expands. */
export function columnsOf<T>(rows: readonly T[], keys: ReadonlyArray<keyof T>): unknown[][] {
  return keys.map((k) => rows.map((r) => r[k]));
}

/**
 * Webhook deliveries as the columns of a delivery insert ($17–$23 of BATCH_SQL, $1–$7 of
 * postgres-webhooks.ts's ENQUEUE_SQL).
 */
export function deliveryColumns(ds: readonly DeliveryInsert[]): unknown[][] {
  return columnsOf(ds, [
    'subscriptionId',
    'eventId',
    'eventType',
    'eventTimestampMs',
    'body',
    'enqueuedAtMs',
    'nextAttemptMs',
  ]);
}

/** Outbox events as the columns of EVENTS_SQL. */
export function eventColumns(events: readonly OccupancyEvent[]): unknown[][] {
  return columnsOf(events, ['eventId', 'type', 'spaceId', 'minuteMs', 'value', 'revision', 'emittedAtMs']);
}

/** A statement and its parameters, as `PostgresSession.transaction` and `fenced` take them. */
export type Statement = [string, unknown[]];

// One statement may not touch a row twice: a later row for the same minute wins, as in SQLite.
/** Presence minutes as PRESENCE_MINUTES_SQL (none for no rows). */
export function presenceMinutesStatements(rows: readonly PresenceMinuteRow[]): Statement[] {
  const last = lastByKey(rows, (r) => `${r.spaceId}\u0000${r.minuteMs}`);
  return last.length === 0
    ? []
    : [[PRESENCE_MINUTES_SQL, columnsOf(last, ['spaceId', 'minuteMs', 'value', 'samples'])]];
}

/** Traffic minutes as TRAFFIC_MINUTES_SQL (none for no rows). */
export function trafficMinutesStatements(rows: readonly TrafficMinuteRow[]): Statement[] {
  const last = lastByKey(rows, (r) => `${r.sensorId}\u0000${r.minuteMs}`);
  return last.length === 0 ? [] : [[TRAFFIC_MINUTES_SQL, columnsOf(last, ['sensorId', 'minuteMs', 'in', 'out'])]];
}
