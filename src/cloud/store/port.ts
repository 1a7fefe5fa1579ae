import type { DeadLetter } from '../ingest.js';
import type { PresenceMinuteRow } from '../presence.js';
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
  close(): void;
}
