import type { HiveState } from '../proto/messages.js';
import type { DeadLetter, Interval, PresenceMinuteRow, RollupLevel, TrafficMinuteRow } from './rows.js';
import type { DeliveryInsert } from './webhook-port.js';

/** Everything one accepted uplink batch writes, in one transaction. */
export interface BatchWrite {
  hiveSerial: string;
  seq: number;
  sentAtMs: number;
  receivedAtMs: number;
  /** The hive's highest contiguous stored seq once this batch is stored. */
  ackedSeq: number;
  /** Packets in the message (accepted and dead-lettered). */
  packetCount: number;
  /**
   * The message as received, stored once (not a row per packet) when it holds accepted
   * packets, with the span of their sensing instants; the pipeline re-reads it for crash
   * recovery and late data.
   */
  raw: { payload: Uint8Array; minSensedMs: number; maxSensedMs: number } | null;
  deadLetters: readonly DeadLetter[];
  /** Last-seen updates of the sensors with accepted packets (latest sensing instant each). */
  sensorsSeen?: ReadonlyArray<{ sensorId: string; lastSeenMs: number }>;
  /**
   * Webhook deliveries of the batch's DETECTIONS/TRAFFIC events, enqueued in the batch's
   * transaction (a repeat of a (subscription, event) is ignored): stored with the batch or not
   * at all, so a crash cannot lose them (the hive retransmits an unacked batch) or enqueue them twice.
   */
  deliveries?: readonly DeliveryInsert[];
}

/** Minutes computed at one recompute and the occupancy events they produced, written in one transaction. */
export interface MinutesWrite {
  /** Inserted or replaced, in this order. */
  presence: readonly PresenceMinuteRow[];
  traffic: readonly TrafficMinuteRow[];
  /** Appended to the event outbox, in this order. */
  events: readonly OccupancyEvent[];
}

/** A stored batch payload, re-read by the pipeline. */
export interface StoredPayload {
  hiveSerial: string;
  seq: number;
  /** When its batch was received: crash recovery feeds it again once the clock is there. */
  receivedAtMs: number;
  payload: Uint8Array;
}

/**
 * Late data for a minute its floor's owner may have finalised, stored by another ingest process
 * (docs/scale-out.md, Late data across processes): the owner reopens the minute at its next
 * per-minute recompute. `owner` is the owning partition (`j/k`).
 */
export interface ReopenMark {
  owner: string;
  floorId: string;
  minuteMs: number;
}

/** A hive's latest heartbeat (spec HiveHeartbeat), as stored. */
export interface HiveStatus {
  hiveId: string;
  hiveSerial: string;
  /** Cloud clock when the heartbeat was processed. */
  lastHeartbeatMs: number;
  /** The hive's own clock in the heartbeat. */
  sentAtMs: number;
  state: HiveState;
  firmwareVersion: string;
  protocolMinor: number;
  uptimeMs: number;
  netPathStability: number;
  ackedSeq: number;
  nextSeq: number;
  bufferedBatches: number;
  bufferedBytes: number;
  droppedPackets: number;
}

/** A sensor's health as the hive reported it (SensorHealth), resolved to the sensor id. */
export interface SensorHealthWrite {
  sensorId: string;
  measuredAtMs: number;
  batteryLevel: number;
  batteryRuntimeS: number;
  rssiDbm: number;
  linkPdr: number;
  uptimeMs: number;
  parent: string;
  hops: number;
  queueOverflows: number;
}

/** What the store knows of a sensor: health fields are null until a heartbeat carried them. */
export interface SensorStatus {
  sensorId: string;
  /** Latest sensing instant of an accepted packet or health measurement. */
  lastSeenMs: number;
  healthAtMs: number | null;
  batteryLevel: number | null;
  batteryRuntimeS: number | null;
  rssiDbm: number | null;
  linkPdr: number | null;
  uptimeMs: number | null;
  parent: string | null;
  hops: number | null;
  queueOverflows: number | null;
}

export interface StoredDeadLetter {
  receivedAtMs: number;
  topic: string;
  reason: string;
  message: string;
  payload: Uint8Array;
}

/** A space of the asset hierarchy, as the reporting API resolves it. */
export interface AssetRow {
  id: string;
  kind: 'site' | 'building' | 'floor' | 'room' | 'zone';
  parentId: string | null;
  name: string;
  timezone: string;
}

/**
 * An occupancy event of spec §6 in the outbox (webhook delivery reads it in id order):
 * `*_OCCUPANCY_1M` (minuteMs = the minute) or `*_OCCUPANCY` (minuteMs = the sensing instant
 * whose instantaneous count it carries).
 */
export interface OccupancyEvent {
  /** Deterministic spec §6 id, `event_<hash>` (`eventId` in events.ts). */
  eventId: string;
  type: string;
  spaceId: string;
  minuteMs: number;
  value: number;
  /** 0 for the first value of the minute, n for its n-th revision (spec §6 rule 1). */
  revision: number;
  emittedAtMs: number;
}

export interface StoredEvent extends OccupancyEvent {
  id: number;
}

/** One rollup bucket to recompute from the minute series. */
export interface RollupBucket {
  /** Presence (default): max of a space's minute values; traffic: sums of a sensor's in/out minutes. */
  kind?: 'presence' | 'traffic';
  /** The space id (presence) or the sensor id (traffic). */
  spaceId: string;
  level: RollupLevel;
  startMs: number;
  endMs: number;
}

export interface SeriesPoint {
  bucketMs: number;
  value: number;
}

export interface TrafficSeriesPoint {
  bucketMs: number;
  in: number;
  out: number;
}

/**
 * A space's presence minutes as two columns (epoch ms, value), in minute order: the
 * reporting API's fast path reads a whole range per call without one object per minute.
 */
export interface PresenceColumns {
  minuteMs: Float64Array;
  value: Float64Array;
}

/**
 * The store's operations in their synchronous form: what the embedded SQLite file answers
 * on the caller's thread (`SqliteStore`), and the shape `Store` lifts to promises.
 */
export interface StoreSync {
  hasBatch(hiveSerial: string, seq: number): boolean;
  /** Highest seq n such that batches 1..n of the hive are stored; 0 when none. */
  ackedSeq(hiveSerial: string): number;
  /**
   * Stores the batch, its packets, its packet dead letters and the hive's ack progress
   * atomically; false (and nothing written) when `(hive, seq)` is already stored — another
   * ingest process on the same store won the race since `hasBatch` said no.
   */
  writeBatch(w: BatchWrite): boolean;
  writeDeadLetter(d: DeadLetter): void;
  /**
   * Forgets what the store received from `fromMs` on: the batches received then (their
   * payloads with them) and the dead letters, and moves each hive's acked progress back to
   * just before its first forgotten batch, so a hive's batch of that seq is new again. For a
   * run resumed on its store (guard.ts): the batches its predecessor's
   * end-of-run drain cut hold only packets sensed before the end, the resumed run's batches of
   * the same seqs hold those and the next ones; the resumed run sends them again. Minutes,
   * events and webhook deliveries stay (recomputed, or a repeat is ignored). Returns how many
   * batches were forgotten.
   */
  forgetReceivedFrom(fromMs: number): number;
  /**
   * Stored payloads holding a packet that may be sensed in [fromMs, toMs) (their sensing
   * span intersects it), in arrival order: recomputing a finalised minute, crash recovery.
   */
  payloadsSensedIn(fromMs: number, toMs: number): StoredPayload[];
  /** Inserts or replaces finalised minutes, in the given order, in one transaction. */
  writePresenceMinutes(rows: readonly PresenceMinuteRow[]): void;
  writeTrafficMinutes(rows: readonly TrafficMinuteRow[]): void;
  /**
   * Minutes and the occupancy events they produce, atomically: the outbox (read by webhook
   * fan-out with a durable cursor) holds an event exactly when its minute rows are stored.
   */
  writeMinutes(w: MinutesWrite): void;
  /** Ordered by minute. */
  presenceMinutes(spaceId: string): PresenceMinuteRow[];
  /** Ordered by minute. */
  trafficMinutes(sensorId: string): TrafficMinuteRow[];
  /** In the order they were stored. */
  deadLetters(): StoredDeadLetter[];
  /** Inserts or replaces the asset rows. */
  writeAssets(rows: readonly AssetRow[]): void;
  assets(): AssetRow[];
  /** Appends to the outbox, in order, in one transaction. */
  writeEvents(events: readonly OccupancyEvent[]): void;
  /** Outbox entries with id > afterId, ascending. */
  events(afterId?: number): StoredEvent[];
  /**
   * How many outbox entries are of a minute (or instant) in [fromMs, toMs): a run's emitted
   * events, counted without reading them (`report merge --store`, docs/scale-out.md).
   */
  eventCount(fromMs: number, toMs: number): number;
  /**
   * Per space, the value of its latest "current count" event (FLOOR/ROOM/ZONE_OCCUPANCY, not
   * `_1M`) at an instant before `beforeMs`: what the recompute had last emitted when it first
   * computed the minute `beforeMs` (crash recovery, `Recompute.load`). Space ids ascending.
   */
  lastInstantCounts(beforeMs: number): Array<{ spaceId: string; value: number }>;
  /** Recomputes the buckets (max of their minute values) in one transaction. */
  refreshRollups(buckets: readonly RollupBucket[]): void;
  /** A space's series at one interval over [fromMs, toMs), ascending. */
  presenceSeries(spaceId: string, every: Interval, fromMs: number, toMs: number): SeriesPoint[];
  /** A traffic sensor's in/out sums per bucket at one interval over [fromMs, toMs), ascending (local-time buckets as presence). */
  trafficSeries(sensorId: string, every: Interval, fromMs: number, toMs: number): TrafficSeriesPoint[];
  /** Deletes rows older than each interval's retention (cutoff per interval, epoch ms). */
  prune(cutoffs: Readonly<Partial<Record<Interval, number>>>): void;
  /** Replaces a hive's latest status (from a heartbeat) and its sensors' health, in one transaction. */
  writeHeartbeat(h: HiveStatus, sensors: readonly SensorHealthWrite[]): void;
  /** The hive's latest heartbeat (by hive id, e.g. `hive_1`), or null when none was received. */
  hiveStatus(hiveId: string): HiveStatus | null;
  /** A sensor's last-seen instant (data or health) and latest health, or null when never seen. */
  sensorStatus(sensorId: string): SensorStatus | null;
  // The HTTP API's reads (reporting, device status): a whole result set per call, so an
  // adapter behind a network pays one round trip per space or per request, not per row.
  /** A space's presence minutes in [fromMs, toMs) as columns, in minute order. */
  presenceColumns(spaceId: string, fromMs: number, toMs: number): PresenceColumns;
  /** The latest heartbeat of each hive, in the order asked (null where none was received). */
  hiveStatuses(hiveIds: readonly string[]): Array<HiveStatus | null>;
  /** Each sensor's status as `sensorStatus`, in the order asked (null where never seen). */
  sensorStatuses(sensorIds: readonly string[]): Array<SensorStatus | null>;
  /** Small durable integers of the pipeline (e.g. the finalisation horizon). */
  getState(key: string): number | undefined;
  setState(key: string, value: number): void;
  /** Records reopen marks (a mark already recorded stays one). */
  markReopen(marks: readonly ReopenMark[]): void;
  /** The owner's recorded marks, by floor id then minute. */
  reopenMarks(owner: string): ReopenMark[];
  /** Deletes these marks (handled by their owner). */
  clearReopenMarks(marks: readonly ReopenMark[]): void;
  close(): void;
}

type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/**
 * What the cloud pipeline, the platform and the HTTP API need from storage: every operation
 * of `StoreSync`, asynchronous, so a network store (PostgreSQL) sits behind the same port as
 * the embedded SQLite file, and a slow query never blocks the event loop. The pipeline awaits its calls one after another, in the order it issues them,
 * so the stored result does not depend on the adapter. Adapters: `sqliteStore` (sqlite-async.ts)
 * and `PostgresStore` (postgres-store.ts); test/store/store-contract.ts is the contract.
 */
export type Store = Async<StoreSync>;
