import type { Clock } from '../core/clock.js';
import type { ValueCounts } from '../core/value-counts.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { MINUTE_MS } from '../core/time.js';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { startMqttIngest, type MqttIngest, type MqttIngestOptions } from './mqtt-ingest.js';
import { startSteps, type StartStep, type Started } from '../core/start-steps.js';
import {
  CloudPipeline,
  type CloudCounters,
  type FloorPartition,
  type IngestPipelines,
  type IngestTally,
  type PipelineOptions,
} from './pipeline.js';
import type { CalibrationPoint } from './calibration.js';
import { EventMetadata, type EventEnvelope, type SensorEvent } from './events.js';
import { assetRows } from './assets.js';
import type { HiveStatus, OccupancyEvent, SensorStatus, Store } from '../store/port.js';
import type { DeliveryInsert } from '../store/webhook-port.js';
import { spaceTrafficOccupancy, TrafficSpaceIndex } from './space-traffic.js';
import type { OccupancyPoint, TrafficSpace } from './traffic-occupancy.js';

/**
 * The embedded cloud: MQTT ingest → pipeline (validate, dedupe, store, aggregate) → the store
 * port (SQLite or PostgreSQL), composed from the pure pipeline and its adapters.
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
  /** The platform's store (the cloud writes through it and closes it). */
  store: Store;
  /** Default 5 minutes. */
  lookbackMs?: number;
  /** MQTT shared-subscription group: several ingest processes split the hives' load. */
  shareGroup?: string;
  /** Aggregate only this partition's floors (`PipelineOptions.partition`: several ingest processes, docs/scale-out.md). */
  partition?: FloorPartition;
  /** Ingest only the catalogue's hives' topics (a simulator shard's platform on a shared broker). */
  ownHivesOnly?: boolean;
  clientId?: string;
  onEvent?: (e: OccupancyEvent) => void;
  /** DETECTIONS and TRAFFIC events (internal stream only, not in the outbox). */
  onSensorEvent?: (e: SensorEvent) => void;
  /** `onSensorEvent` only while this says so (`PipelineOptions.sensorEventsWanted`). */
  sensorEventsWanted?: () => boolean;
  /** Webhook deliveries of a message's DETECTIONS/TRAFFIC events, enqueued in the batch's transaction (`PipelineOptions.sensorDeliveries`). */
  sensorDeliveries?: (events: readonly SensorEvent[], receivedAtMs: number) => DeliveryInsert[];
  /**
   * The pipelines from the options one pipeline would get (default: that one `CloudPipeline`):
   * an ingest process with partition leases runs one per partition it holds (platform/partition-leases.ts).
   */
  pipelines?: (base: PipelineOptions) => Promise<IngestPipelines>;
  /** Batches count as received at their send instant (`PipelineOptions.receivedAtSent`: ingest processes following shard clocks). */
  receivedAtSent?: boolean;
  /** The run's tally so far (`PipelineOptions.tally`): the successor of a killed ingest. */
  tally?: IngestTally;
  /** Whether the store is there (`PipelineOptions.storeAvailable`: the store_restart fault). */
  storeAvailable?: () => boolean;
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
  /**
   * Finalises (computes and writes to the store) every minute whose end is at least lookbackMs
   * before nowMs, after every message received before the call. Called by the runner as sim time advances.
   */
  advance(nowMs: number): Promise<void>;
  /** Finalises every remaining minute (end of run). */
  finish(): Promise<void>;
  /** Resolves once every message received so far is stored and aggregated. */
  idle(): Promise<void>;
  counters(): CloudCounters;
  /** Sim-time latency (processing instant from clock.now() minus sensedAtMs) of every processed packet, for percentiles. */
  latenciesMs(): ValueCounts;
  /** Read back from the store, ordered by minute. */
  presenceMinutes(spaceId: string): Promise<PresenceMinute[]>;
  /** Read back from the store, ordered by minute. */
  trafficMinutes(sensorId: string): Promise<TrafficMinute[]>;
  deadLetters(): Promise<Array<{ receivedAtMs: number; topic: string; reason: string; message: string }>>;
  /** The hive's latest heartbeat (by hive id), or null before the first one (`Store.hiveStatus`). */
  hiveStatus(hiveId: string): Promise<HiveStatus | null>;
  /** A sensor's last-seen instant and latest health, or null when never seen (`Store.sensorStatus`). */
  sensorStatus(sensorId: string): Promise<SensorStatus | null>;
  /** Rooms (all doors counted) and floors (all entrances counted) with a traffic occupancy. */
  trafficSpaces(): readonly TrafficSpace[];
  /**
   * Traffic occupancy of a space for every minute of [fromMs, toMs) (docs/occupancy.md):
   * raw, or calibrated with the space's presence series as hints.
   */
  trafficOccupancy(spaceId: string, fromMs: number, toMs: number, calibrated: boolean): Promise<OccupancyPoint[]>;
  /**
   * Occupancy events of the outbox with id > afterId, as spec §6 envelopes whose metadata is
   * read from the catalogue now (a renamed room shows in the next delivered event); at most `limit`.
   */
  eventEnvelopes(afterId: number, limit: number): Promise<Array<{ id: number; envelope: EventEnvelope }>>;
  close(): Promise<void>;
  /** The ingest_kill fault: batches from now on are stored and never acked (`CloudPipeline.dying`). */
  dying(): void;
  /**
   * The ingest_kill fault: gone at once, as SIGKILL leaves a process: its broker connection cut
   * without a goodbye, its open minutes, caches and queued work dropped, its store connection
   * closed; nothing flushed or finalised. Resolves to the run's tally, for the successor.
   */
  kill(): Promise<IngestTally>;
}

export const DEFAULT_LOOKBACK_MS = 5 * MINUTE_MS;

/** The measured series a run's report reads back from the store (`storedReads`). */
export type StoredReads = Pick<Cloud, 'presenceMinutes' | 'trafficMinutes' | 'trafficSpaces' | 'trafficOccupancy'>;

/**
 * The measured series as the store holds them, for the assets of `catalogue`: per-minute
 * presence and traffic, the traffic spaces, and their occupancy computed from the stored minutes
 * (raw, or calibrated with the space's presence minutes and its calibration points). One
 * definition for the run's cloud and for `report merge --store` (src/run/store-accuracy.ts),
 * which reads the store several ingest processes shared: the same code, so the same figures.
 */
export function storedReads(
  catalogue: AssetCatalogue,
  store: Pick<Store, 'presenceMinutes' | 'trafficMinutes'>,
): StoredReads {
  const spaces = new TrafficSpaceIndex(catalogue);
  // `calibration_points` per room and floor: anchors of the calibrated series.
  const calibrationPoints = (spaceId: string): readonly CalibrationPoint[] | undefined =>
    (catalogue.find('room', spaceId) ?? catalogue.find('floor', spaceId))?.item.calibrationPoints;
  return {
    presenceMinutes: async (spaceId) =>
      (await store.presenceMinutes(spaceId)).map(({ minuteMs, value, samples }) => ({ minuteMs, value, samples })),
    trafficMinutes: async (sensorId) =>
      (await store.trafficMinutes(sensorId)).map((r) => ({ minuteMs: r.minuteMs, in: r.in, out: r.out })),
    trafficSpaces: () => spaces.list(),
    async trafficOccupancy(spaceId, fromMs, toMs, calibrated) {
      const space = spaces.get(spaceId);
      if (!space) return [];
      // The computation is synchronous: read its minutes first.
      const traffic = new Map<string, Awaited<ReturnType<Store['trafficMinutes']>>>();
      for (const t of space.terms)
        if (!traffic.has(t.sensorId)) traffic.set(t.sensorId, await store.trafficMinutes(t.sensorId));
      const presence = calibrated ? await store.presenceMinutes(spaceId) : [];
      const minutes = { trafficMinutes: (id: string) => traffic.get(id) ?? [], presenceMinutes: () => presence };
      return spaceTrafficOccupancy(
        minutes,
        space,
        catalogue.timezoneOf(spaceId),
        fromMs,
        toMs,
        calibrated ? { calibrationPoints: calibrationPoints(spaceId) } : null,
      );
    },
  };
}

/** What the cloud's start-up steps share: each reads what the steps before it started. */
interface CloudParts {
  readonly opts: CloudOptions;
  pipeline: IngestPipelines;
  ingest: MqttIngest;
  /**
   * A failure inside the MQTT callback (e.g. the disk is full) cannot be thrown to anyone
   * there; it is kept and raised by the runner's next call.
   */
  failure: { err: unknown } | null;
}

/** The cloud's start-up, in order (core/start-steps.ts); stopped in reverse on a failure and on close. */
const CLOUD_STEPS: readonly StartStep<CloudParts>[] = [
  { name: 'assets', start: ({ opts }) => opts.store.writeAssets(assetRows(opts.catalogue)) },
  {
    name: 'pipeline',
    start: async (c) => {
      const base = pipelineOptions(c.opts);
      const pipeline: IngestPipelines = c.opts.pipelines ? await c.opts.pipelines(base) : new CloudPipeline(base);
      c.pipeline = pipeline;
      return async () => {
        // Writes already under way finish before the store closes.
        await pipeline.idle();
        await pipeline.close?.();
        await c.opts.store.close();
      };
    },
  },
  {
    name: 'ingest',
    start: async (c) => {
      const ingest = await startMqttIngest(ingestOptions(c));
      c.ingest = ingest;
      return () => ingest.close();
    },
  },
];

function pipelineOptions(opts: CloudOptions): PipelineOptions {
  const { catalogue } = opts;
  return {
    catalogue,
    tickMs: opts.tickMs,
    store: opts.store,
    clock: opts.clock,
    lookbackMs: opts.lookbackMs ?? DEFAULT_LOOKBACK_MS,
    zoneOf: (id) => catalogue.timezoneOf(id),
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    ...(opts.onSensorEvent ? { onSensorEvent: opts.onSensorEvent } : {}),
    ...(opts.sensorEventsWanted ? { sensorEventsWanted: opts.sensorEventsWanted } : {}),
    ...(opts.sensorDeliveries ? { sensorDeliveries: opts.sensorDeliveries } : {}),
    ...(opts.partition ? { partition: opts.partition } : {}),
    ...(opts.receivedAtSent === true ? { receivedAtSent: true } : {}),
    ...(opts.tally ? { tally: opts.tally } : {}),
    ...(opts.storeAvailable ? { storeAvailable: opts.storeAvailable } : {}),
  };
}

/** The cloud's MQTT client: every message to the pipeline, a failure kept for the next call. */
function ingestOptions(c: CloudParts): MqttIngestOptions {
  const { opts, pipeline } = c;
  const keep = (err: unknown): void => void (c.failure ??= { err });
  return {
    brokerUrl: opts.brokerUrl,
    username: opts.username,
    password: opts.password,
    clientId: opts.clientId ?? 'occusim-cloud',
    ...(opts.shareGroup !== undefined ? { shareGroup: opts.shareGroup } : {}),
    ...(opts.ownHivesOnly === true ? { hiveSerials: opts.catalogue.all('hive').map((h) => h.serial) } : {}),
    onMessage(topic, payload) {
      if (c.failure) return Promise.resolve(null);
      return pipeline.handleMessage(topic, payload).catch((err: unknown) => {
        keep(err);
        return null;
      });
    },
    onHeartbeat(topic, payload) {
      if (c.failure) return;
      pipeline.handleHeartbeat(topic, payload).catch(keep);
    },
  };
}

/**
 * Writes the catalogue's assets to the store, connects to the broker (client id
 * `occusim-cloud`) and resolves once subscribed to every hive's uplink topic (QoS 1).
 */
export async function startCloud(opts: CloudOptions): Promise<Cloud> {
  const c = { opts, failure: null } as CloudParts;
  return cloudOver(c, await startSteps(CLOUD_STEPS, c));
}

/** The started parts as the `Cloud` its callers see; `close` is the steps' stop. */
function cloudOver(c: CloudParts, started: Started): Cloud {
  const { pipeline, ingest, opts } = c;
  const { catalogue, store } = opts;
  const check = (): void => {
    if (c.failure)
      throw new AppError(ErrorCodes.CLOUD_FAILED, `cloud ingest failed: ${(c.failure.err as Error).message}`, {
        cause: c.failure.err,
      });
  };
  const metadata = new EventMetadata(catalogue);
  let closed = false;
  return {
    async advance(nowMs) {
      check();
      await pipeline.advance(nowMs);
      check();
    },
    async finish() {
      check();
      await pipeline.finish();
      check();
    },
    async idle() {
      await pipeline.idle();
      check();
    },
    counters: () => pipeline.counters(),
    latenciesMs: () => pipeline.latenciesMs(),
    ...storedReads(catalogue, store),
    deadLetters: async () =>
      (await store.deadLetters()).map(({ receivedAtMs, topic, reason, message }) => ({
        receivedAtMs,
        topic,
        reason,
        message,
      })),
    hiveStatus: (hiveId) => store.hiveStatus(hiveId),
    sensorStatus: (sensorId) => store.sensorStatus(sensorId),
    async eventEnvelopes(afterId, limit) {
      return (await store.events(afterId)).slice(0, limit).map((e) => ({ id: e.id, envelope: metadata.envelope(e) }));
    },
    dying() {
      if (!pipeline.dying)
        throw new AppError(
          ErrorCodes.USAGE,
          'ingest_kill: an ingest process with partition leases cannot be killed this way',
        );
      pipeline.dying();
    },
    async kill() {
      if (!pipeline.retire) throw new AppError(ErrorCodes.USAGE, 'ingest_kill: this ingest cannot be killed');
      closed = true;
      await ingest.kill();
      // Taken before anything else can run: the pipeline is not used again (its queued work is dropped with it).
      const tally = pipeline.retire();
      await store.close();
      return tally;
    },
    async close() {
      if (closed) return;
      closed = true;
      await started.stop();
    },
  };
}
