import type { HiveStatus, SensorStatus } from '../cloud/store/port.js';
import type { AssetCatalogue } from '../assets/catalogue.js';

/**
 * Live device status for GraphQL's `isOnline`, `isStreaming`, `lastHeartbeat` (hives) and
 * `is_online`, `is_streaming`, `last_heartbeat` (sensors), from the cloud store's heartbeat
 * and last-seen tables. Simulated time is not wall time (a max-speed run ends at its
 * scenario's end, days from now), so "recent" is measured against the organisation's newest
 * hive heartbeat: the platform's present as far as its data goes.
 *
 * The reads are the store port's, asynchronous and many devices per call: a request's
 * statuses asked for in the same turn of the event loop (GraphQL resolves a list's fields
 * one after the other) are read in one store call, as DataLoader batches.
 */
export interface StatusSource {
  hiveStatuses(hiveIds: readonly string[]): Promise<ReadonlyArray<HiveStatus | null>>;
  sensorStatuses(sensorIds: readonly string[]): Promise<ReadonlyArray<SensorStatus | null>>;
}

/** Three missed heartbeats (60 s apart by default) and a hive is offline. */
export const HIVE_OFFLINE_AFTER_MS = 3 * 60_000;
/** A sensor reports every batch interval (10 s by default); five silent minutes and it is offline. */
export const SENSOR_OFFLINE_AFTER_MS = 5 * 60_000;
/** A sensor whose data stopped for two minutes is online (health still arrives) but not streaming. */
export const SENSOR_STREAMING_WITHIN_MS = 2 * 60_000;

export interface DeviceFlags {
  online: boolean;
  streaming: boolean;
  /** ISO-8601 UTC, or null when never heard. */
  lastHeartbeat: string | null;
}

/**
 * Loads keys in batches: every key asked for before the batch runs goes into one `read`; each
 * key is read at most once. The batch runs on the tick after the promise jobs queued when its
 * first key was asked for (DataLoader's schedule), not on a timer: fake timers cannot hold it.
 */
class BatchLoader<V> {
  readonly #read: (keys: readonly string[]) => Promise<ReadonlyArray<V | null>>;
  readonly #values = new Map<string, Promise<V | null>>();
  #pending: Array<{ key: string; resolve: (v: V | null) => void; reject: (e: unknown) => void }> = [];

  constructor(read: (keys: readonly string[]) => Promise<ReadonlyArray<V | null>>) {
    this.#read = read;
  }

  load(key: string): Promise<V | null> {
    let value = this.#values.get(key);
    if (!value) {
      value = new Promise<V | null>((resolve, reject) => {
        if (this.#pending.length === 0) void Promise.resolve().then(() => process.nextTick(() => this.#flush()));
        this.#pending.push({ key, resolve, reject });
      });
      this.#values.set(key, value);
    }
    return value;
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    this.#read(batch.map((b) => b.key)).then(
      (rows) => batch.forEach((b, i) => b.resolve(rows[i] ?? null)),
      (err: unknown) => batch.forEach((b) => b.reject(err)),
    );
  }
}

/** One request's view: statuses read at most once per device, the present computed once. */
export class RequestStatus {
  readonly #assets: AssetCatalogue;
  readonly #orgId: string;
  readonly #hives: BatchLoader<HiveStatus>;
  readonly #records: BatchLoader<SensorStatus>;
  readonly #sensors = new Map<string, Promise<DeviceFlags>>();
  #present: Promise<number | null> | undefined;

  constructor(source: StatusSource, assets: AssetCatalogue, orgId: string) {
    this.#hives = new BatchLoader((ids) => source.hiveStatuses(ids));
    this.#records = new BatchLoader((ids) => source.sensorStatuses(ids));
    this.#assets = assets;
    this.#orgId = orgId;
  }

  async hive(hiveId: string): Promise<DeviceFlags> {
    const [h, present] = await Promise.all([this.#hives.load(hiveId), this.presentMs()]);
    const online = h !== null && present !== null && present - h.lastHeartbeatMs <= HIVE_OFFLINE_AFTER_MS;
    return { online, streaming: online && h.state !== 'booting', lastHeartbeat: h ? iso(h.lastHeartbeatMs) : null };
  }

  sensor(sensorId: string): Promise<DeviceFlags> {
    let flags = this.#sensors.get(sensorId);
    if (!flags) this.#sensors.set(sensorId, (flags = this.#sensorFlags(sensorId)));
    return flags;
  }

  /** The store's record of the sensor (battery, radio, last seen), read at most once per request. */
  sensorRecord(sensorId: string): Promise<SensorStatus | null> {
    return this.#records.load(sensorId);
  }

  async #sensorFlags(sensorId: string): Promise<DeviceFlags> {
    const [s, present] = await Promise.all([this.sensorRecord(sensorId), this.presentMs()]);
    if (s === null || present === null) return { online: false, streaming: false, lastHeartbeat: s?.healthAtMs != null ? iso(s.healthAtMs) : null };
    const age = present - s.lastSeenMs;
    return { online: age <= SENSOR_OFFLINE_AFTER_MS, streaming: age <= SENSOR_STREAMING_WITHIN_MS, lastHeartbeat: s.healthAtMs !== null ? iso(s.healthAtMs) : null };
  }

  /**
   * The organisation's newest hive heartbeat, or null when none of its hives was ever heard:
   * the platform's present as far as its data goes (a finished max-speed run's end). All the
   * organisation's hives are read in one call, which also serves their own `hive` lookups.
   */
  presentMs(): Promise<number | null> {
    this.#present ??= Promise.all(this.#assets.list('hive', this.#orgId).map((h) => this.#hives.load(h.id))).then((statuses) => {
      let newest: number | null = null;
      for (const h of statuses) {
        const t = h?.lastHeartbeatMs;
        if (t !== undefined && (newest === null || t > newest)) newest = t;
      }
      return newest;
    });
    return this.#present;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
