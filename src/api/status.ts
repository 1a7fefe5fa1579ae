import type { HiveStatus, SensorStatus } from '../store/port.js';
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
 * One promise per key (a fleet's GraphQL listing asks for tens of thousands).
 */
class BatchLoader<V> {
  readonly #read: (keys: readonly string[]) => Promise<readonly V[]>;
  /** Where each key asked for is read: its batch and index there. */
  readonly #where = new Map<string, { batch: Batch<V>; i: number }>();
  readonly #values = new Map<string, Promise<V>>();
  #batch: Batch<V> | null = null;

  constructor(read: (keys: readonly string[]) => Promise<readonly V[]>) {
    this.#read = read;
  }

  load(key: string): Promise<V> {
    let value = this.#values.get(key);
    if (!value) {
      const { batch, i } = this.#place(key);
      value = batch.rows.then((rows) => rows[i] as V);
      this.#values.set(key, value);
    }
    return value;
  }

  /** Reads the keys (those not read yet) without a promise per key: a whole list at once. */
  async loadMany(keys: readonly string[]): Promise<void> {
    const batches = new Set<Batch<V>>();
    for (const key of keys) batches.add(this.#place(key).batch);
    await Promise.all([...batches].map((b) => b.rows));
  }

  #place(key: string): { batch: Batch<V>; i: number } {
    let at = this.#where.get(key);
    if (!at) {
      const batch = (this.#batch ??= this.#next());
      at = { batch, i: batch.keys.push(key) - 1 };
      this.#where.set(key, at);
    }
    return at;
  }

  #next(): Batch<V> {
    const keys: string[] = [];
    const rows = Promise.resolve()
      .then(() => new Promise<void>((r) => process.nextTick(r)))
      .then(() => {
        this.#batch = null;
        return this.#read(keys);
      });
    return { keys, rows };
  }
}

interface Batch<V> {
  keys: string[];
  rows: Promise<readonly V[]>;
}

/** A sensor's stored record and the flags derived from it, computed once per request. */
export interface SensorEntry {
  record: SensorStatus | null;
  flags: DeviceFlags;
}

/** One request's view: statuses read at most once per device, the present computed once. */
export class RequestStatus {
  readonly #assets: AssetCatalogue;
  readonly #orgId: string;
  readonly #hives: BatchLoader<HiveStatus | null>;
  readonly #sensors: BatchLoader<SensorEntry>;
  /** Sensor entries already read in this request, for resolvers that can answer at once. */
  readonly #ready = new Map<string, SensorEntry>();
  #present: Promise<number | null> | undefined;

  constructor(source: StatusSource, assets: AssetCatalogue, orgId: string) {
    this.#hives = new BatchLoader((ids) => source.hiveStatuses(ids));
    // A batch of sensors: their records and the present in parallel, then every entry at once.
    this.#sensors = new BatchLoader(async (ids) => {
      const [rows, present] = await Promise.all([source.sensorStatuses(ids), this.presentMs()]);
      return ids.map((id, i) => {
        const record = rows[i] ?? null;
        const entry = { record, flags: sensorFlags(record, present) };
        this.#ready.set(id, entry);
        return entry;
      });
    });
    this.#assets = assets;
    this.#orgId = orgId;
  }

  async hive(hiveId: string): Promise<DeviceFlags> {
    const [h, present] = await Promise.all([this.#hives.load(hiveId), this.presentMs()]);
    const online = h !== null && present !== null && present - h.lastHeartbeatMs <= HIVE_OFFLINE_AFTER_MS;
    return { online, streaming: online && h.state !== 'booting', lastHeartbeat: h ? iso(h.lastHeartbeatMs) : null };
  }

  /** The sensor's stored record (battery, radio, last seen) and its flags, read at most once per request. */
  sensorEntry(sensorId: string): Promise<SensorEntry> {
    return this.#sensors.load(sensorId);
  }

  /** The entry when this request has read it already (a list preloaded by `preloadSensors`), else undefined. */
  sensorEntryNow(sensorId: string): SensorEntry | undefined {
    return this.#ready.get(sensorId);
  }

  /**
   * Reads a list's sensors in one batch before GraphQL resolves their fields, so each status
   * field then answers at once (`sensorEntryNow`) instead of with a promise per field.
   */
  preloadSensors(sensorIds: readonly string[]): Promise<void> {
    return this.#sensors.loadMany(sensorIds);
  }

  async sensor(sensorId: string): Promise<DeviceFlags> {
    return (await this.#sensors.load(sensorId)).flags;
  }

  async sensorRecord(sensorId: string): Promise<SensorStatus | null> {
    return (await this.#sensors.load(sensorId)).record;
  }

  /**
   * The organisation's newest hive heartbeat, or null when none of its hives was ever heard:
   * the platform's present as far as its data goes (a finished max-speed run's end). All the
   * organisation's hives are read in one call, which also serves their own `hive` lookups.
   */
  presentMs(): Promise<number | null> {
    this.#present ??= Promise.all(this.#assets.list('hive', this.#orgId).map((h) => this.#hives.load(h.id))).then(
      (statuses) => {
        let newest: number | null = null;
        for (const h of statuses) {
          const t = h?.lastHeartbeatMs;
          if (t !== undefined && (newest === null || t > newest)) newest = t;
        }
        return newest;
      },
    );
    return this.#present;
  }
}

function sensorFlags(s: SensorStatus | null, present: number | null): DeviceFlags {
  if (s === null || present === null)
    return { online: false, streaming: false, lastHeartbeat: s?.healthAtMs != null ? iso(s.healthAtMs) : null };
  const age = present - s.lastSeenMs;
  return {
    online: age <= SENSOR_OFFLINE_AFTER_MS,
    streaming: age <= SENSOR_STREAMING_WITHIN_MS,
    lastHeartbeat: s.healthAtMs !== null ? iso(s.healthAtMs) : null,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
