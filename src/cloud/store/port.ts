import type { DeadLetter } from '../ingest.js';
import type { PresenceMinuteRow } from '../presence.js';
import type { Interval, RollupLevel } from '../rollup.js';
import type { TrafficMinuteRow } from '../traffic.js';

/**
 * What the cloud pipeline needs from storage. The pipeline depends on this port only;
 * `SqliteStore` is the embedded adapter (a PostgreSQL one would implement the same port).
 */
export interface StoredPresencePacket {
  sensorId: string;
  sensedAtMs: number;
  /** Sensor-local normalised coordinates, as received. */
  detections: ReadonlyArray<readonly [number, number]>;
}

export interface StoredTrafficPacket {
  sensorId: string;
  sensedAtMs: number;
  intervalMs: number;
  in: number;
  out: number;
}

/** Everything one accepted uplink batch writes, in one transaction. */
export interface BatchWrite {
  hiveSerial: string;
  seq: number;
  sentAtMs: number;
  receivedAtMs: number;
  /** The hive's highest contiguous stored seq once this batch is stored. */
  ackedSeq: number;
  presence: readonly StoredPresencePacket[];
  traffic: readonly StoredTrafficPacket[];
  deadLetters: readonly DeadLetter[];
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

/** An occupancy event of spec §6 in the outbox (webhook delivery reads it in id order). */
export interface OccupancyEvent {
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
  spaceId: string;
  level: RollupLevel;
  startMs: number;
  endMs: number;
}

export interface SeriesPoint {
  bucketMs: number;
  value: number;
}

export interface Store {
  hasBatch(hiveSerial: string, seq: number): boolean;
  /** Highest seq n such that batches 1..n of the hive are stored; 0 when none. */
  ackedSeq(hiveSerial: string): number;
  /** Stores the batch, its packets, its packet dead letters and the hive's ack progress atomically. */
  writeBatch(w: BatchWrite): void;
  writeDeadLetter(d: DeadLetter): void;
  /** Raw packets sensed in [minuteMs, minuteMs + 60 s), for recomputing a finalised minute. */
  presencePacketsInMinute(minuteMs: number): StoredPresencePacket[];
  trafficPacketsInMinute(minuteMs: number): StoredTrafficPacket[];
  /** Inserts or replaces finalised minutes, in the given order, in one transaction. */
  writePresenceMinutes(rows: readonly PresenceMinuteRow[]): void;
  writeTrafficMinutes(rows: readonly TrafficMinuteRow[]): void;
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
  /** Recomputes the buckets (max of their minute values) in one transaction. */
  refreshRollups(buckets: readonly RollupBucket[]): void;
  /** A space's series at one interval over [fromMs, toMs), ascending. */
  presenceSeries(spaceId: string, every: Interval, fromMs: number, toMs: number): SeriesPoint[];
  /** Deletes rows older than each interval's retention (cutoff per interval, epoch ms). */
  prune(cutoffs: Readonly<Partial<Record<Interval, number>>>): void;
  /** Raw packets sensed at or after `fromMs` (crash recovery of open minutes). */
  presencePacketsSince(fromMs: number): StoredPresencePacket[];
  trafficPacketsSince(fromMs: number): StoredTrafficPacket[];
  /** Small durable integers of the pipeline (e.g. the finalisation horizon). */
  getState(key: string): number | undefined;
  setState(key: string, value: number): void;
  close(): void;
}
