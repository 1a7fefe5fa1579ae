import { randomBytes } from 'node:crypto';
import type { AssetOverlay } from '../state/port.js';
import type { BuildingModel, DoorModel, FloorModel, HiveModel, RoomModel, ScenarioModel, SensorModel, SiteModel, ZoneModel } from '../../scenario/model.js';

/**
 * The asset registry as the API serves it: every organisation's sites, buildings, floors,
 * rooms, zones, hives and sensors from their scenarios, plus what clients changed through
 * mutations (names, custom ids, tags, deleted sensors). Lookups take the caller's
 * organisation: another organisation's id behaves exactly like an id that does not exist.
 */
export interface Owned<T> {
  orgId: string;
  orgName: string;
  item: T;
}

export interface Tag {
  id: string;
  name: string;
  orgId: string;
  /** Floor, room and zone ids. */
  spaceIds: Set<string>;
}

type Kind = 'site' | 'building' | 'floor' | 'room' | 'zone' | 'hive' | 'sensor';
const KINDS: readonly Kind[] = ['site', 'building', 'floor', 'room', 'zone', 'hive', 'sensor'];

export class AssetService {
  readonly sites = new Map<string, Owned<SiteModel>>();
  readonly buildings = new Map<string, Owned<BuildingModel>>();
  readonly floors = new Map<string, Owned<FloorModel>>();
  readonly rooms = new Map<string, Owned<RoomModel>>();
  readonly zones = new Map<string, Owned<ZoneModel>>();
  readonly hives = new Map<string, Owned<HiveModel>>();
  readonly sensors = new Map<string, Owned<SensorModel>>();
  readonly doors = new Map<string, DoorModel>();
  readonly tags = new Map<string, Tag>();
  readonly #timezones = new Map<string, string>(); // floor id → site zone
  /** Each scenario item as JSON, to tell what the API changed (the overlay that is persisted). */
  readonly #baseline = new Map<string, { kind: Kind; orgId: string; json: string }>();

  constructor(models: readonly ScenarioModel[]) {
    for (const m of models) {
      const own = <T>(item: T): Owned<T> => ({ orgId: m.org.id, orgName: m.org.name, item: { ...item } });
      for (const x of m.sites) this.sites.set(x.id, own(x));
      for (const x of m.buildings) this.buildings.set(x.id, own(x));
      for (const x of m.floors) {
        this.floors.set(x.id, own(x));
        this.#timezones.set(x.id, m.sites.find((s) => s.id === x.siteId)?.timezone ?? 'UTC');
      }
      for (const x of m.rooms) this.rooms.set(x.id, own(x));
      for (const x of m.zones) this.zones.set(x.id, own(x));
      for (const x of m.hives) this.hives.set(x.id, own(x));
      for (const x of m.sensors) this.sensors.set(x.id, own(x));
      for (const d of m.doors) this.doors.set(d.id, d);
    }
    for (const kind of KINDS) for (const [id, o] of this.#map(kind)) this.#baseline.set(id, { kind, orgId: o.orgId, json: JSON.stringify(o.item) });
  }

  /** What the organisation changed against its scenario: added or changed items, deletions, tags. */
  overlay(orgId: string): AssetOverlay {
    const out: AssetOverlay = { changed: [], deleted: [], tags: [] };
    for (const kind of KINDS) {
      for (const [id, o] of this.#map(kind)) {
        if (o.orgId !== orgId) continue;
        const json = JSON.stringify(o.item);
        if (this.#baseline.get(id)?.json !== json) out.changed.push({ kind, item: JSON.parse(json) as AssetOverlay['changed'][number]['item'] });
      }
    }
    for (const [id, b] of this.#baseline) if (b.orgId === orgId && !this.#map(b.kind).has(id)) out.deleted.push({ kind: b.kind, id });
    for (const t of this.tags.values()) if (t.orgId === orgId) out.tags.push({ id: t.id, name: t.name, spaceIds: [...t.spaceIds] });
    return out;
  }

  /** Re-applies a persisted overlay (at start, before serving). Items of other organisations are never touched. */
  applyOverlay(orgId: string, overlay: AssetOverlay): void {
    const orgName = this.orgName(orgId) ?? '';
    for (const { kind, item } of overlay.changed) {
      const existing = this.#map(kind).get(item.id);
      if (existing && existing.orgId !== orgId) continue;
      this.#map(kind).set(item.id, { orgId, orgName, item });
      if (kind === 'floor') this.#zoneFloor(item as unknown as FloorModel);
    }
    for (const { kind, id } of overlay.deleted) if (this.#map(kind).get(id)?.orgId === orgId) this.#map(kind).delete(id);
    for (const t of overlay.tags) this.tags.set(t.id, { id: t.id, name: t.name, orgId, spaceIds: new Set(t.spaceIds) });
  }

  /** Items of one kind visible to the organisation, in scenario order. */
  list<K extends Kind>(kind: K, orgId: string): Array<ItemOf<K>> {
    const out: Array<ItemOf<K>> = [];
    for (const o of this.#map(kind).values()) if (o.orgId === orgId) out.push(o.item as ItemOf<K>);
    return out;
  }

  /** One item of the organisation, or undefined (also for another organisation's id). */
  get<K extends Kind>(kind: K, orgId: string, id: string): ItemOf<K> | undefined {
    const o = this.#map(kind).get(id);
    return o && o.orgId === orgId ? (o.item as ItemOf<K>) : undefined;
  }

  orgName(orgId: string): string | undefined {
    for (const s of this.sites.values()) if (s.orgId === orgId) return s.orgName;
    return undefined;
  }

  timezoneOfFloor(floorId: string): string {
    return this.#timezones.get(floorId) ?? 'UTC';
  }

  /** Adds an item created through the API to the organisation (parents' child lists are the caller's to update). */
  add<K extends Kind>(kind: K, orgId: string, item: ItemOf<K>): ItemOf<K> {
    const orgName = this.orgName(orgId) ?? '';
    (this.#map(kind) as Map<string, Owned<ItemOf<K>>>).set((item as { id: string }).id, { orgId, orgName, item });
    if (kind === 'floor') this.#zoneFloor(item as FloorModel);
    return item;
  }

  deleteSensor(orgId: string, id: string): SensorModel | undefined {
    const s = this.get('sensor', orgId, id);
    if (s) this.sensors.delete(id);
    return s;
  }

  createTag(orgId: string, name: string): Tag {
    const tag: Tag = { id: `tag_${randomBytes(8).toString('hex')}`, name, orgId, spaceIds: new Set() };
    this.tags.set(tag.id, tag);
    return tag;
  }

  tag(orgId: string, id: string): Tag | undefined {
    const t = this.tags.get(id);
    return t && t.orgId === orgId ? t : undefined;
  }

  tagsOf(orgId: string, spaceId: string): Tag[] {
    return [...this.tags.values()].filter((t) => t.orgId === orgId && t.spaceIds.has(spaceId));
  }

  /** Whether `id` names a floor, room or zone of the organisation. */
  isSpace(orgId: string, id: string): boolean {
    return this.get('floor', orgId, id) !== undefined || this.get('room', orgId, id) !== undefined || this.get('zone', orgId, id) !== undefined;
  }

  /** A floor added after construction reports in its site's zone like the scenario's floors. */
  #zoneFloor(floor: FloorModel): void {
    if (!this.#timezones.has(floor.id)) this.#timezones.set(floor.id, this.sites.get(floor.siteId)?.item.timezone ?? 'UTC');
  }

  #map(kind: Kind): Map<string, Owned<unknown>> {
    switch (kind) {
      case 'site':
        return this.sites;
      case 'building':
        return this.buildings;
      case 'floor':
        return this.floors;
      case 'room':
        return this.rooms;
      case 'zone':
        return this.zones;
      case 'hive':
        return this.hives;
      case 'sensor':
        return this.sensors;
    }
  }
}

export type ItemOf<K extends Kind> = K extends 'site'
  ? SiteModel
  : K extends 'building'
    ? BuildingModel
    : K extends 'floor'
      ? FloorModel
      : K extends 'room'
        ? RoomModel
        : K extends 'zone'
          ? ZoneModel
          : K extends 'hive'
            ? HiveModel
            : SensorModel;
