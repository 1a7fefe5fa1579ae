import { createHash } from 'node:crypto';
import type { AssetCatalogue } from '../assets/catalogue.js';
import type { StoredEvent } from '../store/port.js';

/**
 * Events of spec §6: deterministic ids, the envelope and its metadata. Ids are a hash of
 * what identifies the event — type, subject (space or sensor), instant and revision — so
 * the same run gives the same ids and a recomputed value gets a new id (never random).
 */
export const EVENT_VERSION = 'v1.0.0';

export function eventId(type: string, subjectId: string, timestampMs: number, revision: number): string {
  return `event_${createHash('sha256').update(`${type}|${subjectId}|${timestampMs}|${revision}`).digest('hex').slice(0, 24)}`;
}

/** The spec §6 envelope. */
export interface EventEnvelope {
  id: string;
  type: string;
  timestamp: number;
  version: string;
  metadata: Record<string, string>;
  data: unknown;
}

/** A sensor-data event (DETECTIONS, TRAFFIC) on the internal stream. */
export interface SensorEvent {
  eventId: string;
  type: 'DETECTIONS' | 'TRAFFIC';
  sensorId: string;
  timestampMs: number;
  data: { local: Array<[number, number]>; world: Array<[number, number]> } | { in: number; out: number };
}

type Meta = Record<string, string>;

/**
 * Metadata of spec §6 ("Metadata fields") per space or sensor, read from the asset catalogue:
 * rebuilt whenever the catalogue changed, so a renamed room shows in the next event.
 */
export class EventMetadata {
  readonly #catalogue: AssetCatalogue;
  #builtAt = -1;
  #spaces = new Map<string, Meta>();
  #sensors = new Map<string, Meta>();

  constructor(catalogue: AssetCatalogue) {
    this.#catalogue = catalogue;
  }

  #fresh(): void {
    if (this.#builtAt === this.#catalogue.version) return;
    this.#builtAt = this.#catalogue.version;
    this.#spaces = new Map();
    this.#sensors = new Map();
    const c = this.#catalogue;
    const floorMeta = new Map<string, Meta>();
    for (const { orgId, item: f } of c.floors.values()) {
      const b = c.buildings.get(f.buildingId)?.item;
      const s = c.sites.get(f.siteId)?.item;
      const m: Meta = {
        org_id: orgId,
        org_name: c.orgName(orgId) ?? '',
        site_id: f.siteId,
        site_name: s?.name ?? '',
        building_id: f.buildingId,
        building_name: b?.name ?? '',
        floor_id: f.id,
        floor_name: f.name,
      };
      if (f.customId !== null) m.floor_custom_id = f.customId;
      floorMeta.set(f.id, m);
      this.#spaces.set(f.id, m);
    }
    const roomMeta = new Map<string, Meta>();
    for (const { item: r } of c.rooms.values()) {
      const m: Meta = { ...floorMeta.get(r.floorId), room_id: r.id, room_name: r.name };
      if (r.customId !== null) m.room_custom_id = r.customId;
      roomMeta.set(r.id, m);
      this.#spaces.set(r.id, m);
    }
    for (const { item: z } of c.zones.values()) {
      const m: Meta = {
        ...(z.roomId !== null ? roomMeta.get(z.roomId) : floorMeta.get(z.floorId)),
        zone_id: z.id,
        zone_name: z.name,
      };
      if (z.customId !== null) m.zone_custom_id = z.customId;
      this.#spaces.set(z.id, m);
    }
    for (const { item: s } of c.sensors.values()) {
      const h = c.hives.get(s.hiveId)?.item;
      const base = s.roomId !== null ? roomMeta.get(s.roomId) : floorMeta.get(s.floorId);
      // Custom ids are for occupancy events only (spec §6).
      const { floor_custom_id: _f, room_custom_id: _r, ...location } = base ?? {};
      this.#sensors.set(s.id, {
        ...location,
        hive_id: s.hiveId,
        hive_serial: h?.serial ?? '',
        hive_model: 'hive',
        hive_version: h?.firmwareVersion ?? '',
        sensor_id: s.id,
        mac_address: s.mac,
        sensor_mode: s.mode,
        sensor_model: s.model,
      });
    }
  }

  forSpace(spaceId: string): Meta {
    this.#fresh();
    return this.#spaces.get(spaceId) ?? {};
  }

  forSensor(sensorId: string): Meta {
    this.#fresh();
    return this.#sensors.get(sensorId) ?? {};
  }

  /** The envelope of an outbox entry (occupancy events: data is the count). */
  envelope(e: StoredEvent): EventEnvelope {
    return {
      id: e.eventId,
      type: e.type,
      timestamp: e.minuteMs,
      version: EVENT_VERSION,
      metadata: this.forSpace(e.spaceId),
      data: e.value,
    };
  }

  /** The envelope of a sensor-data event. */
  sensorEnvelope(e: SensorEvent): EventEnvelope {
    return {
      id: e.eventId,
      type: e.type,
      timestamp: e.timestampMs,
      version: EVENT_VERSION,
      metadata: this.forSensor(e.sensorId),
      data: e.data,
    };
  }
}
