import type { Clock } from '../core/clock.js';
import type { ValueCounts } from '../core/value-counts.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { MINUTE_MS } from '../core/time.js';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { startMqttIngest, type MqttIngest } from './mqtt-ingest.js';
import { CloudPipeline, type CloudCounters } from './pipeline.js';
import type { CalibrationPoint } from './calibration.js';
import { EventMetadata, type EventEnvelope, type SensorEvent } from './events.js';
import { assetRows } from './assets.js';
import type { HiveStatus, OccupancyEvent, SensorStatus } from './store/port.js';
import { SqliteStore } from './store/sqlite-store.js';
import { spaceTrafficOccupancy, TrafficSpaceIndex } from './space-traffic.js';
import type { OccupancyPoint, TrafficSpace } from './traffic-occupancy.js';

/**
 * The embedded cloud: MQTT ingest → pipeline (validate, dedupe, store, aggregate) → SQLite,
 * composed from the pure pipeline and its two adapters.
 */
export type { CloudCounters } from './pipeline.js';

export interface CloudOptions {
  brokerUrl: string;
  username: string;
  password: string;
  /** The platform's assets: what ingest accepts and events describe. */
  catalogue: AssetCatalogue;
  /** Sampling grid of the sensors (ms). */
  tickMs: number;
  clock: Clock;
  dbPath: string;
  /** Default 5 minutes. */
  lookbackMs?: number;
  /** MQTT shared-subscription group: several ingest processes split the hives' load. */
  shareGroup?: string;
  clientId?: string;
  onEvent?: (e: OccupancyEvent) => void;
  /** DETECTIONS and TRAFFIC events (internal stream only, not in the outbox). */
  onSensorEvent?: (e: SensorEvent) => void;
}

export interface PresenceMinute {
  minuteMs: number;
  value: number;
  samples: number;
}

export interface TrafficMinute {
  minuteMs: number;
  in: number;
  out: number;
}

export interface Cloud {
  /** Finalises (computes and writes to the store) every minute whose end is at least lookbackMs before nowMs. Called by the runner as sim time advances. */
  advance(nowMs: number): void;
  /** Finalises every remaining minute (end of run). */
  finish(): void;
  counters(): CloudCounters;
  /** Sim-time latency (processing instant from clock.now() minus sensedAtMs) of every processed packet, for percentiles. */
  latenciesMs(): ValueCounts;
  /** Read back from the store, ordered by minute. */
  presenceMinutes(spaceId: string): PresenceMinute[];
  /** Read back from the store, ordered by minute. */
  trafficMinutes(sensorId: string): TrafficMinute[];
  deadLetters(): Array<{ receivedAtMs: number; topic: string; reason: string; message: string }>;
  /** The hive's latest heartbeat (by hive id), or null before the first one (`Store.hiveStatus`). */
  hiveStatus(hiveId: string): HiveStatus | null;
  /** A sensor's last-seen instant and latest health, or null when never seen (`Store.sensorStatus`). */
  sensorStatus(sensorId: string): SensorStatus | null;
  /** Rooms (all doors counted) and floors (all entrances counted) with a traffic occupancy. */
  trafficSpaces(): readonly TrafficSpace[];
  /**
   * Traffic occupancy of a space for every minute of [fromMs, toMs) (docs/occupancy.md):
   * raw, or calibrated with the space's presence series as hints.
   */
  trafficOccupancy(spaceId: string, fromMs: number, toMs: number, calibrated: boolean): OccupancyPoint[];
  /**
   * Occupancy events of the outbox with id > afterId, as spec §6 envelopes whose metadata is
   * read from the catalogue now (a renamed room shows in the next delivered event); at most `limit`.
   */
  eventEnvelopes(afterId: number, limit: number): Array<{ id: number; envelope: EventEnvelope }>;
  close(): Promise<void>;
}

export const DEFAULT_LOOKBACK_MS = 5 * MINUTE_MS;

/**
 * Opens the store, connects to the broker (client id `occusim-cloud`) and resolves once
 * subscribed to every hive's uplink topic (QoS 1).
 */
export async function startCloud(opts: CloudOptions): Promise<Cloud> {
  const store = new SqliteStore(opts.dbPath);
  const { catalogue } = opts;
  store.writeAssets(assetRows(catalogue));
  const zoneOf = (id: string): string => catalogue.timezoneOf(id);
  const metadata = new EventMetadata(catalogue);
  const pipeline = new CloudPipeline({
    catalogue,
    tickMs: opts.tickMs,
    store,
    clock: opts.clock,
    lookbackMs: opts.lookbackMs ?? DEFAULT_LOOKBACK_MS,
    zoneOf,
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    ...(opts.onSensorEvent ? { onSensorEvent: opts.onSensorEvent } : {}),
  });
  const spaces = new TrafficSpaceIndex(catalogue);
  // `calibration_points` per room and floor: anchors of the calibrated series.
  const calibrationPoints = (spaceId: string): readonly CalibrationPoint[] | undefined => (catalogue.find('room', spaceId) ?? catalogue.find('floor', spaceId))?.item.calibrationPoints;
  // A failure inside the MQTT callback (e.g. the disk is full) cannot be thrown to anyone
  // there; it is kept and raised by the runner's next call.
  let failure: unknown = undefined;
  let ingest: MqttIngest;
  try {
    ingest = await startMqttIngest({
      brokerUrl: opts.brokerUrl,
      username: opts.username,
      password: opts.password,
      clientId: opts.clientId ?? 'occusim-cloud',
      ...(opts.shareGroup !== undefined ? { shareGroup: opts.shareGroup } : {}),
      onMessage(topic, payload) {
        if (failure !== undefined) return null;
        try {
          return pipeline.handleMessage(topic, payload);
        } catch (err) {
          failure = err;
          return null;
        }
      },
      onHeartbeat(topic, payload) {
        if (failure !== undefined) return;
        try {
          pipeline.handleHeartbeat(topic, payload);
        } catch (err) {
          failure = err;
        }
      },
    });
  } catch (err) {
    store.close();
    throw err;
  }
  const check = (): void => {
    if (failure !== undefined) throw new AppError(ErrorCodes.CLOUD_FAILED, `cloud ingest failed: ${(failure as Error).message}`, { cause: failure });
  };
  let closed = false;
  return {
    advance(nowMs) {
      check();
      pipeline.advance(nowMs);
    },
    finish() {
      check();
      pipeline.finish();
    },
    counters: () => pipeline.counters(),
    latenciesMs: () => pipeline.latenciesMs(),
    presenceMinutes: (spaceId) => store.presenceMinutes(spaceId).map(({ minuteMs, value, samples }) => ({ minuteMs, value, samples })),
    trafficMinutes: (sensorId) => store.trafficMinutes(sensorId).map((r) => ({ minuteMs: r.minuteMs, in: r.in, out: r.out })),
    deadLetters: () => store.deadLetters().map(({ receivedAtMs, topic, reason, message }) => ({ receivedAtMs, topic, reason, message })),
    hiveStatus: (hiveId) => store.hiveStatus(hiveId),
    sensorStatus: (sensorId) => store.sensorStatus(sensorId),
    trafficSpaces: () => spaces.list(),
    trafficOccupancy(spaceId, fromMs, toMs, calibrated) {
      const space = spaces.get(spaceId);
      return space ? spaceTrafficOccupancy(store, space, zoneOf(spaceId), fromMs, toMs, calibrated ? { calibrationPoints: calibrationPoints(spaceId) } : null) : [];
    },
    eventEnvelopes(afterId, limit) {
      return store
        .events(afterId)
        .slice(0, limit)
        .map((e) => ({ id: e.id, envelope: metadata.envelope(e) }));
    },
    async close() {
      if (closed) return;
      closed = true;
      await ingest.close();
      store.close();
    },
  };
}
