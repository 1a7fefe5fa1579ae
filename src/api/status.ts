import type { HiveStatus, SensorStatus } from '../cloud/store/port.js';
import type { AssetCatalogue } from '../assets/catalogue.js';

/**
 * Live device status for GraphQL's `isOnline`, `isStreaming`, `lastHeartbeat` (hives) and
 * `is_online`, `is_streaming`, `last_heartbeat` (sensors), from the cloud store's heartbeat
 * and last-seen tables. Simulated time is not wall time (a max-speed run ends at its
 * scenario's end, days from now), so "recent" is measured against the organisation's newest
 * hive heartbeat: the platform's present as far as its data goes.
 */
export interface StatusSource {
  hiveStatus(hiveId: string): HiveStatus | null;
  sensorStatus(sensorId: string): SensorStatus | null;
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

/** One request's view: statuses read at most once per device, the present computed once. */
export class RequestStatus {
  readonly #source: StatusSource;
  readonly #assets: AssetCatalogue;
  readonly #orgId: string;
  readonly #hives = new Map<string, HiveStatus | null>();
  readonly #sensors = new Map<string, DeviceFlags>();
  readonly #records = new Map<string, SensorStatus | null>();
  #present: number | null | undefined;

  constructor(source: StatusSource, assets: AssetCatalogue, orgId: string) {
    this.#source = source;
    this.#assets = assets;
    this.#orgId = orgId;
  }

  hive(hiveId: string): DeviceFlags {
    const h = this.#hive(hiveId);
    const present = this.#presentMs();
    const online = h !== null && present !== null && present - h.lastHeartbeatMs <= HIVE_OFFLINE_AFTER_MS;
    return { online, streaming: online && h.state !== 'booting', lastHeartbeat: h ? iso(h.lastHeartbeatMs) : null };
  }

  sensor(sensorId: string): DeviceFlags {
    let flags = this.#sensors.get(sensorId);
    if (!flags) this.#sensors.set(sensorId, (flags = this.#sensorFlags(sensorId)));
    return flags;
  }

  /** The store's record of the sensor (battery, radio, last seen), read at most once per request. */
  sensorRecord(sensorId: string): SensorStatus | null {
    if (!this.#records.has(sensorId)) this.#records.set(sensorId, this.#source.sensorStatus(sensorId));
    return this.#records.get(sensorId) ?? null;
  }

  #sensorFlags(sensorId: string): DeviceFlags {
    const s = this.sensorRecord(sensorId);
    const present = this.#presentMs();
    if (s === null || present === null) return { online: false, streaming: false, lastHeartbeat: s?.healthAtMs != null ? iso(s.healthAtMs) : null };
    const age = present - s.lastSeenMs;
    return { online: age <= SENSOR_OFFLINE_AFTER_MS, streaming: age <= SENSOR_STREAMING_WITHIN_MS, lastHeartbeat: s.healthAtMs !== null ? iso(s.healthAtMs) : null };
  }

  #hive(id: string): HiveStatus | null {
    if (!this.#hives.has(id)) this.#hives.set(id, this.#source.hiveStatus(id));
    return this.#hives.get(id) ?? null;
  }

  /**
   * The organisation's newest hive heartbeat, or null when none of its hives was ever heard:
   * the platform's present as far as its data goes (a finished max-speed run's end).
   */
  presentMs(): number | null {
    return this.#presentMs();
  }

  #presentMs(): number | null {
    if (this.#present === undefined) {
      let newest: number | null = null;
      for (const h of this.#assets.list('hive', this.#orgId)) {
        const t = this.#hive(h.id)?.lastHeartbeatMs;
        if (t !== undefined && (newest === null || t > newest)) newest = t;
      }
      this.#present = newest;
    }
    return this.#present;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
