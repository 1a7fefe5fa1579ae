import type Database from 'better-sqlite3';
import type { HiveStatus, SensorHealthWrite, SensorStatus, StoredPayload } from './port.js';

/** Prepared statements of migrations 3 and 8 (batch payloads, hive and sensor status). @internal */
export function prepareStatus(db: Database.Database) {
  return {
    insertPayload: db.prepare(
      'INSERT INTO batch_payloads (hive_serial, seq, min_sensed_ms, max_sensed_ms, payload) VALUES (?, ?, ?, ?, ?)',
    ),
    // Sensing spans are short (one batch interval), so the end index bounds the scan.
    // A payload outlives no batch row (forgetting deletes both), so the join keeps every payload.
    payloadsIn: db.prepare<
      [number, number],
      { hive_serial: string; seq: number; payload: Buffer; received_at_ms: number }
    >(
      'SELECT p.hive_serial, p.seq, p.payload, b.received_at_ms FROM batch_payloads p JOIN batches b ON b.hive_serial = p.hive_serial AND b.seq = p.seq WHERE p.max_sensed_ms >= ? AND p.min_sensed_ms < ? ORDER BY p.id',
    ),
    prunePayloads: db.prepare('DELETE FROM batch_payloads WHERE max_sensed_ms < ?'),
    refreshTrafficRollup: db.prepare(
      `INSERT OR REPLACE INTO traffic_rollup (sensor_id, every, bucket_ms, in_count, out_count, minutes)
       SELECT ?, ?, ?, SUM(in_count), SUM(out_count), COUNT(*) FROM traffic_minute WHERE sensor_id = ? AND minute_ms >= ? AND minute_ms < ? HAVING COUNT(*) > 0`,
    ),
    trafficMinuteSeries: db.prepare<
      [string, number, number],
      { bucket_ms: number; in_count: number; out_count: number }
    >(
      'SELECT minute_ms AS bucket_ms, in_count, out_count FROM traffic_minute WHERE sensor_id = ? AND minute_ms >= ? AND minute_ms < ? ORDER BY minute_ms',
    ),
    trafficRollupSeries: db.prepare<
      [string, string, number, number],
      { bucket_ms: number; in_count: number; out_count: number }
    >(
      'SELECT bucket_ms, in_count, out_count FROM traffic_rollup WHERE sensor_id = ? AND every = ? AND bucket_ms >= ? AND bucket_ms < ? ORDER BY bucket_ms',
    ),
    pruneTrafficRollup: db.prepare('DELETE FROM traffic_rollup WHERE every = ? AND bucket_ms < ?'),
    upsertHive: db.prepare(
      `INSERT OR REPLACE INTO hive_status (hive_id, hive_serial, last_heartbeat_ms, sent_at_ms, state, firmware_version, protocol_minor, uptime_ms, details)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    hive: db.prepare<[string], HiveStatusTableRow>('SELECT * FROM hive_status WHERE hive_id = ?'),
    // Health replaces the health fields; last seen only moves forward. Rows are keyed by the
    // reporting hive (migration 8), so a heartbeat's rows are neighbours.
    health: db.prepare(healthSql(1)),
    healthRows: db.prepare(healthSql(SEEN_ROWS)),
    seen: db.prepare(seenSql(1)),
    seenRows: db.prepare(seenSql(SEEN_ROWS)),
    sensor: db.prepare<[string], Record<string, number | string | null>>(SENSOR_STATUS_SQL),
  };
}

type Q = ReturnType<typeof prepareStatus>;

/**
 * Last-seen updates per statement: a batch names each of its sensors once (~30–50 for a fleet
 * hive), and one statement of many rows costs a fraction of as many one-row statements (the
 * binding and the call into SQLite are per statement). Rows naming one sensor twice apply in
 * order, as separate statements would (the conflict clause keeps the later instant).
 */
const SEEN_ROWS = 32;

function seenSql(rows: number): string {
  return `INSERT INTO sensor_status (hive_serial, sensor_id, last_seen_ms) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?)').join(', ')}
       ON CONFLICT (hive_serial, sensor_id) DO UPDATE SET last_seen_ms = MAX(last_seen_ms, excluded.last_seen_ms)`;
}

function healthSql(rows: number): string {
  return `INSERT INTO sensor_status (hive_serial, sensor_id, last_seen_ms, health_at_ms, battery_level, battery_runtime_s, rssi_dbm, link_pdr, uptime_ms, parent, hops, queue_overflows)
       VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ON CONFLICT (hive_serial, sensor_id) DO UPDATE SET last_seen_ms = MAX(last_seen_ms, excluded.last_seen_ms), health_at_ms = excluded.health_at_ms,
         battery_level = excluded.battery_level, battery_runtime_s = excluded.battery_runtime_s, rssi_dbm = excluded.rssi_dbm, link_pdr = excluded.link_pdr,
         uptime_ms = excluded.uptime_ms, parent = excluded.parent, hops = excluded.hops, queue_overflows = excluded.queue_overflows`;
}

/**
 * A sensor's rows, one per hive that reported it (migration 8); `mergedStatusRow` merges them.
 * One index range read per sensor (usually one row). @internal
 */
export const SENSOR_STATUS_SQL = 'SELECT * FROM sensor_status WHERE sensor_id = ?';

type StatusRow = Record<string, number | string | null>;

/**
 * A sensor's rows as one: last seen the latest of them, health from the row measured last
 * (ties: the greater hive serial, bytewise, so the answer does not depend on the order rows
 * were written; postgres-store.ts's `SENSOR_STATUSES_SQL` is the same rule). @internal
 */
export function mergedStatusRow(rows: readonly StatusRow[]): StatusRow | undefined {
  if (rows.length <= 1) return rows[0];
  let health = rows[0] as StatusRow;
  let lastSeen = health.last_seen_ms as number;
  for (let i = 1; i < rows.length; i++) {
    const r = rows[i] as StatusRow;
    lastSeen = Math.max(lastSeen, r.last_seen_ms as number);
    const [a, b] = [r.health_at_ms, health.health_at_ms];
    const later =
      a !== null &&
      (b === null ||
        (a as number) > (b as number) ||
        (a === b &&
          Buffer.compare(Buffer.from(r.hive_serial as string), Buffer.from(health.hive_serial as string)) > 0));
    if (later) health = r;
  }
  return { ...health, last_seen_ms: lastSeen };
}

/** Each sensor's last-seen instant under the batch's hive moves forward to the given one (never back). @internal */
export function writeSeenRows(
  q: Q,
  hiveSerial: string,
  rows: ReadonlyArray<{ sensorId: string; lastSeenMs: number }>,
): void {
  let i = 0;
  if (rows.length >= SEEN_ROWS) {
    const args: Array<string | number> = new Array<string | number>(3 * SEEN_ROWS);
    for (; i + SEEN_ROWS <= rows.length; i += SEEN_ROWS) {
      for (let k = 0; k < SEEN_ROWS; k++) {
        const r = rows[i + k] as { sensorId: string; lastSeenMs: number };
        args[3 * k] = hiveSerial;
        args[3 * k + 1] = r.sensorId;
        args[3 * k + 2] = r.lastSeenMs;
      }
      q.seenRows.run(args);
    }
  }
  for (; i < rows.length; i++) {
    const r = rows[i] as { sensorId: string; lastSeenMs: number };
    q.seen.run(hiveSerial, r.sensorId, r.lastSeenMs);
  }
}

/** @internal */
export function payloadRows(q: Q, fromMs: number, toMs: number): StoredPayload[] {
  return q.payloadsIn.all(fromMs, toMs).map((r) => ({
    hiveSerial: r.hive_serial,
    seq: r.seq,
    receivedAtMs: r.received_at_ms,
    payload: new Uint8Array(r.payload.buffer, r.payload.byteOffset, r.payload.byteLength),
  }));
}

/** @internal */
export function writeHeartbeatRows(q: Q, h: HiveStatus, sensors: readonly SensorHealthWrite[]): void {
  const hiveSerial = h.hiveSerial;
  q.upsertHive.run(hiveStatusValues(h));
  // SEEN_ROWS rows per statement, as the last-seen updates (a repeated sensor applies in order).
  const put = (args: Array<string | number | null>, at: number, s: SensorHealthWrite): void => {
    args[at] = hiveSerial;
    args[at + 1] = s.sensorId;
    args[at + 2] = s.measuredAtMs;
    args[at + 3] = s.measuredAtMs;
    args[at + 4] = s.batteryLevel;
    args[at + 5] = s.batteryRuntimeS;
    args[at + 6] = s.rssiDbm;
    args[at + 7] = s.linkPdr;
    args[at + 8] = s.uptimeMs;
    args[at + 9] = s.parent;
    args[at + 10] = s.hops;
    args[at + 11] = s.queueOverflows;
  };
  let i = 0;
  if (sensors.length >= SEEN_ROWS) {
    const args = new Array<string | number | null>(HEALTH_COLUMNS * SEEN_ROWS);
    for (; i + SEEN_ROWS <= sensors.length; i += SEEN_ROWS) {
      for (let k = 0; k < SEEN_ROWS; k++) put(args, HEALTH_COLUMNS * k, sensors[i + k] as SensorHealthWrite);
      q.healthRows.run(args);
    }
  }
  const one = new Array<string | number | null>(HEALTH_COLUMNS);
  for (; i < sensors.length; i++) {
    put(one, 0, sensors[i] as SensorHealthWrite);
    q.health.run(one);
  }
}

const HEALTH_COLUMNS = 12;

/** @internal */
export function hiveStatusRow(q: Q, hiveId: string): HiveStatus | null {
  const r = q.hive.get(hiveId);
  return r ? hiveStatusOf(hiveId, r) : null;
}

/** A `hive_status` row as the port's HiveStatus (the SQLite and PostgreSQL adapters share it). */
export interface HiveStatusTableRow {
  hive_serial: string;
  last_heartbeat_ms: number;
  sent_at_ms: number;
  state: string;
  firmware_version: string;
  protocol_minor: number;
  uptime_ms: number;
  details: string;
}

/**
 * A HiveStatus as the values of a `hive_status` row, in its column order (hive_id … details):
 * the inverse of `hiveStatusOf`, what both adapters write.
 */
export function hiveStatusValues(
  h: HiveStatus,
): [string, string, number, number, string, string, number, number, string] {
  const { hiveId, hiveSerial, lastHeartbeatMs, sentAtMs, state, firmwareVersion, protocolMinor, uptimeMs, ...details } =
    h;
  return [
    hiveId,
    hiveSerial,
    lastHeartbeatMs,
    sentAtMs,
    state,
    firmwareVersion,
    protocolMinor,
    uptimeMs,
    JSON.stringify(details),
  ];
}

export function hiveStatusOf(hiveId: string, r: HiveStatusTableRow): HiveStatus {
  const details = JSON.parse(r.details) as Omit<
    HiveStatus,
    | 'hiveId'
    | 'hiveSerial'
    | 'lastHeartbeatMs'
    | 'sentAtMs'
    | 'state'
    | 'firmwareVersion'
    | 'protocolMinor'
    | 'uptimeMs'
  >;
  return {
    hiveId,
    hiveSerial: r.hive_serial,
    lastHeartbeatMs: r.last_heartbeat_ms,
    sentAtMs: r.sent_at_ms,
    state: r.state as HiveStatus['state'],
    firmwareVersion: r.firmware_version,
    protocolMinor: r.protocol_minor,
    uptimeMs: r.uptime_ms,
    ...details,
  };
}

/** @internal */
export function sensorStatusRow(q: Q, sensorId: string): SensorStatus | null {
  const r = mergedStatusRow(q.sensor.all(sensorId));
  return r ? sensorStatusOf(sensorId, r) : null;
}

/** A `sensor_status` row as the port's SensorStatus (the SQLite and PostgreSQL adapters share it). */
export function sensorStatusOf(sensorId: string, r: Record<string, number | string | null>): SensorStatus {
  const num = (v: number | string | null | undefined): number | null => (typeof v === 'number' ? v : null);
  return {
    sensorId,
    lastSeenMs: r.last_seen_ms as number,
    healthAtMs: num(r.health_at_ms),
    batteryLevel: num(r.battery_level),
    batteryRuntimeS: num(r.battery_runtime_s),
    rssiDbm: num(r.rssi_dbm),
    linkPdr: num(r.link_pdr),
    uptimeMs: num(r.uptime_ms),
    parent: typeof r.parent === 'string' ? r.parent : null,
    hops: num(r.hops),
    queueOverflows: num(r.queue_overflows),
  };
}

/**
 * Hive statuses in the order of `hiveIds` (null where none): the prepared lookup per id, on
 * the caller's thread (cheaper here than one `IN (json_each(?))` statement: 30,300 sensors
 * in ~25 % less time). @internal
 */
export function hiveStatusRows(q: Q, hiveIds: readonly string[]): Array<HiveStatus | null> {
  return hiveIds.map((id) => hiveStatusRow(q, id));
}

/** Sensor statuses in the order of `sensorIds` (null where never seen). @internal */
export function sensorStatusRows(q: Q, sensorIds: readonly string[]): Array<SensorStatus | null> {
  return sensorIds.map((id) => sensorStatusRow(q, id));
}
