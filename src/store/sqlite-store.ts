import Database from 'better-sqlite3';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { DeadLetter, Interval, PresenceMinuteRow, TrafficMinuteRow } from './rows.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import { prepareOutboxInsert } from './sqlite-outbox.js';
import type {
  AssetRow,
  BatchWrite,
  MinutesWrite,
  OccupancyEvent,
  RollupBucket,
  SeriesPoint,
  StoreSync,
  StoredDeadLetter,
  StoredEvent,
  HiveStatus,
  SensorHealthWrite,
  SensorStatus,
  StoredPayload,
  PresenceColumns,
  ReopenMark,
  TrafficSeriesPoint,
} from './port.js';
import { prepareReopenMarks, type SqliteReopenMarks } from './sqlite-reopen-marks.js';
import { prepareSeries, presenceColumnsOf } from './sqlite-series.js';
import {
  hiveStatusRow,
  hiveStatusRows,
  payloadRows,
  prepareStatus,
  sensorStatusRow,
  sensorStatusRows,
  writeHeartbeatRows,
  writeSeenRows,
} from './sqlite-status.js';

/**
 * The embedded store: one SQLite file (or ':memory:'), WAL journal with synchronous=NORMAL
 * (durable across process crashes, cheap commits) checkpointed every 8,192 pages, prepared
 * statements (multi-row where a write has many rows), one transaction per batch or per set of
 * finalised minutes.
 */
type Db = Database.Database;

function migrate(db: Db, migrations: readonly Migration[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number | null };
  const current = row.v ?? 0;
  for (const m of migrations.filter((x) => x.version > current)) {
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(m.version);
    })();
  }
}

/** Opens (creating and migrating when needed) the SQLite file of the store; other adapters of the same file share it. */
export function openDatabase(path: string): Db {
  try {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Checkpoints every ~32 MB of log instead of SQLite's 4 MB: a fleet run commits a batch per
    // message (~2,700 per batch interval at 100,000 sensors, each rewriting the same table
    // pages), so fewer checkpoints copy each page once instead of many times and sync the file
    // ten times less often. Commits are as durable as before (the log is the same; a process
    // crash loses nothing committed).
    db.pragma('wal_autocheckpoint = 8192');
    migrate(db, MIGRATIONS);
    return db;
  } catch (err) {
    throw new AppError(ErrorCodes.STORE_FAILED, `cannot open store ${path}: ${(err as Error).message}`, { cause: err });
  }
}

function prepareAll(db: Db) {
  return {
    hasBatch: db.prepare<[string, number], { one: number }>(
      'SELECT 1 AS one FROM batches WHERE hive_serial = ? AND seq = ?',
    ),
    ackedSeq: db.prepare<[string], { acked_seq: number }>('SELECT acked_seq FROM hive_progress WHERE hive_serial = ?'),
    insertBatch: db.prepare(
      'INSERT OR IGNORE INTO batches (hive_serial, seq, sent_at_ms, received_at_ms, packet_count) VALUES (?, ?, ?, ?, ?)',
    ),
    upsertProgress: db.prepare(
      'INSERT INTO hive_progress (hive_serial, acked_seq) VALUES (?, ?) ON CONFLICT (hive_serial) DO UPDATE SET acked_seq = MAX(acked_seq, excluded.acked_seq)',
    ),
    insertDeadLetter: db.prepare(
      'INSERT INTO dead_letters (received_at_ms, topic, reason, message, payload) VALUES (?, ?, ?, ?, ?)',
    ),
    upsertPresenceMinute: db.prepare(
      'INSERT OR REPLACE INTO presence_minute (space_id, minute_ms, value, samples) VALUES (?, ?, ?, ?)',
    ),
    upsertTrafficMinute: db.prepare(
      'INSERT OR REPLACE INTO traffic_minute (sensor_id, minute_ms, in_count, out_count) VALUES (?, ?, ?, ?)',
    ),
    presenceMinutes: db.prepare<[string], { minute_ms: number; value: number; samples: number }>(
      'SELECT minute_ms, value, samples FROM presence_minute WHERE space_id = ? ORDER BY minute_ms',
    ),
    trafficMinutes: db.prepare<[string], { minute_ms: number; in_count: number; out_count: number }>(
      'SELECT minute_ms, in_count, out_count FROM traffic_minute WHERE sensor_id = ? ORDER BY minute_ms',
    ),
    // A batch's webhook deliveries: the outbox's own insert (rows and bodies; a repeat skipped).
    enqueueDeliveries: prepareOutboxInsert(db),
    deadLetters: db.prepare<
      [],
      { received_at_ms: number; topic: string; reason: string; message: string; payload: Buffer }
    >('SELECT received_at_ms, topic, reason, message, payload FROM dead_letters ORDER BY id'),
  };
}

export class SqliteStore implements StoreSync {
  readonly #db: Db;
  readonly #q: ReturnType<typeof prepareAll>;
  readonly #s: ReturnType<typeof prepareSeries>;
  readonly #st: ReturnType<typeof prepareStatus>;
  readonly #marks: SqliteReopenMarks;

  /** Opens (creating and migrating when needed) the store at `path`; ':memory:' for tests. */
  constructor(path: string) {
    this.#db = openDatabase(path);
    this.#q = prepareAll(this.#db);
    this.#s = prepareSeries(this.#db);
    this.#st = prepareStatus(this.#db);
    this.#marks = prepareReopenMarks(this.#db);
  }

  /** Applied schema version (the highest migration number). */
  schemaVersion(): number {
    return (this.#db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number }).v;
  }

  hasBatch(hiveSerial: string, seq: number): boolean {
    return this.#q.hasBatch.get(hiveSerial, seq) !== undefined;
  }

  ackedSeq(hiveSerial: string): number {
    return this.#q.ackedSeq.get(hiveSerial)?.acked_seq ?? 0;
  }

  writeBatch(w: BatchWrite): boolean {
    const q = this.#q;
    return this.#db.transaction(() => {
      // Another process on the file stored it first: nothing of it is written twice.
      if (q.insertBatch.run(w.hiveSerial, w.seq, w.sentAtMs, w.receivedAtMs, w.packetCount).changes === 0) return false;
      if (w.raw)
        this.#st.insertPayload.run(
          w.hiveSerial,
          w.seq,
          w.raw.minSensedMs,
          w.raw.maxSensedMs,
          Buffer.from(w.raw.payload.buffer, w.raw.payload.byteOffset, w.raw.payload.byteLength),
        );
      for (const d of w.deadLetters) this.#insertDeadLetter(d);
      if (w.sensorsSeen) writeSeenRows(this.#st, w.hiveSerial, w.sensorsSeen);
      if (w.deliveries && w.deliveries.length > 0) q.enqueueDeliveries(w.deliveries);
      q.upsertProgress.run(w.hiveSerial, w.ackedSeq);
      return true;
    })();
  }

  writeMinutes(w: MinutesWrite): void {
    const q = this.#q;
    this.#db.transaction(() => {
      for (const r of w.presence) q.upsertPresenceMinute.run(r.spaceId, r.minuteMs, r.value, r.samples);
      for (const r of w.traffic) q.upsertTrafficMinute.run(r.sensorId, r.minuteMs, r.in, r.out);
      for (const e of w.events)
        this.#s.insertEvent.run(e.eventId, e.type, e.spaceId, e.minuteMs, e.value, e.revision, e.emittedAtMs);
    })();
  }

  writeDeadLetter(d: DeadLetter): void {
    this.#insertDeadLetter(d);
  }

  forgetReceivedFrom(fromMs: number): number {
    // Once per resumed run: plain statements, no index on the reception instant.
    const db = this.#db;
    return db.transaction(() => {
      const firsts = db
        .prepare<[number], { hive_serial: string; first: number }>(
          'SELECT hive_serial, MIN(seq) AS first FROM batches WHERE received_at_ms >= ? GROUP BY hive_serial',
        )
        .all(fromMs);
      db.prepare(
        'DELETE FROM batch_payloads WHERE EXISTS (SELECT 1 FROM batches b WHERE b.hive_serial = batch_payloads.hive_serial AND b.seq = batch_payloads.seq AND b.received_at_ms >= ?)',
      ).run(fromMs);
      const forgotten = db.prepare('DELETE FROM batches WHERE received_at_ms >= ?').run(fromMs).changes;
      db.prepare('DELETE FROM dead_letters WHERE received_at_ms >= ?').run(fromMs);
      const back = db.prepare('UPDATE hive_progress SET acked_seq = MIN(acked_seq, ?) WHERE hive_serial = ?');
      for (const f of firsts) back.run(f.first - 1, f.hive_serial);
      return forgotten;
    })();
  }

  trafficSeries(sensorId: string, every: Interval, fromMs: number, toMs: number): TrafficSeriesPoint[] {
    const rows =
      every === '1m'
        ? this.#st.trafficMinuteSeries.all(sensorId, fromMs, toMs)
        : this.#st.trafficRollupSeries.all(sensorId, every, fromMs, toMs);
    return rows.map((r) => ({ bucketMs: r.bucket_ms, in: r.in_count, out: r.out_count }));
  }

  payloadsSensedIn(fromMs: number, toMs: number): StoredPayload[] {
    return payloadRows(this.#st, fromMs, toMs);
  }

  writeHeartbeat(h: HiveStatus, sensors: readonly SensorHealthWrite[]): void {
    this.#db.transaction(() => writeHeartbeatRows(this.#st, h, sensors))();
  }

  hiveStatus(hiveId: string): HiveStatus | null {
    return hiveStatusRow(this.#st, hiveId);
  }

  sensorStatus(sensorId: string): SensorStatus | null {
    return sensorStatusRow(this.#st, sensorId);
  }

  presenceColumns(spaceId: string, fromMs: number, toMs: number): PresenceColumns {
    return presenceColumnsOf(this.#s, spaceId, fromMs, toMs);
  }

  hiveStatuses(hiveIds: readonly string[]): Array<HiveStatus | null> {
    return hiveStatusRows(this.#st, hiveIds);
  }

  sensorStatuses(sensorIds: readonly string[]): Array<SensorStatus | null> {
    return sensorStatusRows(this.#st, sensorIds);
  }

  writePresenceMinutes(rows: readonly PresenceMinuteRow[]): void {
    const q = this.#q;
    this.#db.transaction(() => {
      for (const r of rows) q.upsertPresenceMinute.run(r.spaceId, r.minuteMs, r.value, r.samples);
    })();
  }

  writeTrafficMinutes(rows: readonly TrafficMinuteRow[]): void {
    const q = this.#q;
    this.#db.transaction(() => {
      for (const r of rows) q.upsertTrafficMinute.run(r.sensorId, r.minuteMs, r.in, r.out);
    })();
  }

  presenceMinutes(spaceId: string): PresenceMinuteRow[] {
    return this.#q.presenceMinutes
      .all(spaceId)
      .map((r) => ({ spaceId, minuteMs: r.minute_ms, value: r.value, samples: r.samples }));
  }

  trafficMinutes(sensorId: string): TrafficMinuteRow[] {
    return this.#q.trafficMinutes
      .all(sensorId)
      .map((r) => ({ sensorId, minuteMs: r.minute_ms, in: r.in_count, out: r.out_count }));
  }

  deadLetters(): StoredDeadLetter[] {
    return this.#q.deadLetters.all().map((r) => ({
      receivedAtMs: r.received_at_ms,
      topic: r.topic,
      reason: r.reason,
      message: r.message,
      payload: new Uint8Array(r.payload),
    }));
  }

  writeAssets(rows: readonly AssetRow[]): void {
    const q = this.#s;
    this.#db.transaction(() => {
      for (const a of rows) q.upsertAsset.run(a.id, a.kind, a.parentId, a.name, a.timezone);
    })();
  }

  assets(): AssetRow[] {
    return this.#s.assets.all().map((r) => ({
      id: r.id,
      kind: r.kind as AssetRow['kind'],
      parentId: r.parent_id,
      name: r.name,
      timezone: r.timezone,
    }));
  }

  writeEvents(events: readonly OccupancyEvent[]): void {
    const q = this.#s;
    this.#db.transaction(() => {
      for (const e of events)
        q.insertEvent.run(e.eventId, e.type, e.spaceId, e.minuteMs, e.value, e.revision, e.emittedAtMs);
    })();
  }

  events(afterId = 0): StoredEvent[] {
    return this.#s.events.all(afterId).map((r) => ({
      id: r[0],
      eventId: r[1],
      type: r[2],
      spaceId: r[3],
      minuteMs: r[4],
      value: r[5],
      revision: r[6],
      emittedAtMs: r[7],
    }));
  }

  eventCount(fromMs: number, toMs: number): number {
    return this.#s.eventCount.get(fromMs, toMs)?.n ?? 0;
  }

  lastInstantCounts(beforeMs: number): Array<{ spaceId: string; value: number }> {
    return this.#s.lastInstantCounts.all(beforeMs).map((r) => ({ spaceId: r.space_id, value: r.value }));
  }

  refreshRollups(buckets: readonly RollupBucket[]): void {
    const q = this.#s;
    this.#db.transaction(() => {
      for (const b of buckets) {
        if (b.kind === 'traffic')
          this.#st.refreshTrafficRollup.run(b.spaceId, b.level, b.startMs, b.spaceId, b.startMs, b.endMs);
        else q.refreshRollup.run(b.spaceId, b.level, b.startMs, b.spaceId, b.startMs, b.endMs);
      }
    })();
  }

  presenceSeries(spaceId: string, every: Interval, fromMs: number, toMs: number): SeriesPoint[] {
    if (every === '1m')
      return this.#s.minuteSeries.all(spaceId, fromMs, toMs).map((r) => ({ bucketMs: r.minute_ms, value: r.value }));
    return this.#s.rollupSeries
      .all(spaceId, every, fromMs, toMs)
      .map((r) => ({ bucketMs: r.bucket_ms, value: r.value }));
  }

  prune(cutoffs: Readonly<Partial<Record<Interval, number>>>): void {
    const q = this.#s;
    this.#db.transaction(() => {
      for (const [every, cutoff] of Object.entries(cutoffs)) {
        if (cutoff === undefined || !Number.isFinite(cutoff)) continue;
        if (every === '1m') {
          q.pruneMinutes.run(cutoff);
          q.pruneTrafficMinutes.run(cutoff);
          q.pruneDetections.run(cutoff);
          q.pruneTrafficSamples.run(cutoff);
          this.#st.prunePayloads.run(cutoff);
          q.pruneEvents.run(cutoff);
        } else {
          q.pruneRollup.run(every, cutoff);
          this.#st.pruneTrafficRollup.run(every, cutoff);
        }
      }
    })();
  }

  getState(key: string): number | undefined {
    return this.#s.getState.get(key)?.value;
  }

  setState(key: string, value: number): void {
    this.#s.setState.run(key, value);
  }

  markReopen(marks: readonly ReopenMark[]): void {
    this.#marks.mark(marks);
  }

  reopenMarks(owner: string): ReopenMark[] {
    return this.#marks.of(owner);
  }

  clearReopenMarks(marks: readonly ReopenMark[]): void {
    this.#marks.clear(marks);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #insertDeadLetter(d: DeadLetter): void {
    this.#q.insertDeadLetter.run(d.receivedAtMs, d.topic, d.reason, d.message, Buffer.from(d.payload));
  }
}
