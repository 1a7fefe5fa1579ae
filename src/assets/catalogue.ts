import { randomBytes } from 'node:crypto';
import {
  ASSET_KINDS,
  type AssetKind,
  type AssetOf,
  type AssetSnapshot,
  type Building,
  type Client,
  type Door,
  type Floor,
  type Hive,
  type Organisation,
  type OrganisationAssets,
  type Room,
  type Sensor,
  type Site,
  type Tag,
  type User,
  type Zone,
} from './model.js';

/**
 * The platform's one asset catalogue: every organisation's spaces, devices, tags, users and
 * clients. Ingest (which hives and sensors exist), event metadata, GraphQL, reporting, stats
 * and client management all read it; it changes only through its own operations, and every
 * change is announced to the listeners (ingest rebuilds its tables, metadata its cache), so a
 * sensor created through GraphQL is accepted at once and a renamed room shows in the next
 * event. Lookups take the caller's organisation: another organisation's id behaves exactly
 * like an id that does not exist.
 */
export interface Owned<T> {
  orgId: string;
  item: T;
}

export interface CatalogueChange {
  kind: AssetKind | 'tag';
  op: 'add' | 'update' | 'delete';
  orgId: string;
  id: string;
}

/** What an organisation changed against the catalogue it was filled with (persisted across restarts). */
export interface CatalogueOverlay {
  /** Items added or changed, in catalogue order; each replaces the item with that id. */
  changed: Array<{ kind: AssetKind; item: { id: string } & Record<string, unknown> }>;
  /** Items of the fill that no longer exist. */
  deleted: Array<{ kind: AssetKind; id: string }>;
  tags: Array<{ id: string; name: string; spaceIds: string[] }>;
}

type Listener = (change: CatalogueChange) => void;

/** A persisted overlay item that was not re-applied, and why (logged at start by the caller). */
export interface RefusedOverlayItem {
  kind: AssetKind;
  id: string;
  reason: string;
}

/**
 * A device identity: what a device says on the wire (a hive's serial is its MQTT login and topic
 * level, a sensor's MAC names it inside every uplink). Ingest resolves the wire by these, so
 * each must name one device of one organisation platform-wide: two holders would let one
 * organisation's uplinks be credited to (or dead-lettered by) another's registration.
 */
export type DeviceIdentity = { kind: 'hive'; serial: string } | { kind: 'sensor'; mac: string };

/** The index key of an identity (a MAC compares without letter case). */
export function identityKey(identity: DeviceIdentity): string {
  return identity.kind === 'hive' ? `serial:${identity.serial}` : `mac:${identity.mac.toLowerCase()}`;
}

function identityOf(kind: AssetKind, item: unknown): DeviceIdentity | null {
  if (kind === 'hive') return { kind, serial: (item as Hive).serial };
  if (kind === 'sensor') return { kind, mac: (item as Sensor).mac };
  return null;
}

/** Thrown by `add` when the device identity is already held; the message names no holder. */
export class DeviceIdentityTaken extends Error {
  constructor(readonly identity: DeviceIdentity) {
    super(
      identity.kind === 'hive'
        ? `hive serial ${identity.serial} is already registered`
        : `sensor MAC ${identity.mac} is already registered`,
    );
    this.name = 'DeviceIdentityTaken';
  }
}

/** Fields that name or describe an asset: changing them never changes what ingest accepts or counts. */
const DESCRIPTIVE_FIELDS = new Set([
  'name',
  'customId',
  'siteNumber',
  'buildingNumber',
  'capacity',
  'address',
  'firmwareVersion',
]);

export class AssetCatalogue {
  readonly orgs = new Map<string, Organisation>();
  readonly sites = new Map<string, Owned<Site>>();
  readonly buildings = new Map<string, Owned<Building>>();
  readonly floors = new Map<string, Owned<Floor>>();
  readonly rooms = new Map<string, Owned<Room>>();
  readonly zones = new Map<string, Owned<Zone>>();
  readonly hives = new Map<string, Owned<Hive>>();
  readonly sensors = new Map<string, Owned<Sensor>>();
  readonly doors = new Map<string, Owned<Door>>();
  readonly tags = new Map<string, Tag>();
  readonly users = new Map<string, Owned<User>>();
  readonly clients = new Map<string, Owned<Client>>();
  /** Bumped by every change: caches derived from the catalogue (event metadata) compare it. */
  #version = 0;
  /** Bumped by changes that ingest's tables depend on (devices, spaces' geometry), not by renames. */
  #ingestVersion = 0;
  readonly #listeners = new Set<Listener>();
  /** Each item of the fill as JSON, to tell what the API changed (the overlay that is persisted). */
  readonly #baseline = new Map<string, { kind: AssetKind; orgId: string; json: string }>();
  /** Device identity (see `DeviceIdentity`) → the id of the one hive or sensor holding it, all organisations. */
  readonly #identities = new Map<string, string>();

  /** A catalogue filled with these organisations' assets (their state at fill is the baseline of overlays). */
  constructor(organisations: readonly OrganisationAssets[] = []) {
    for (const o of organisations) this.#fill(o);
    // The scenario loader refuses a serial or MAC used twice (claimId, givenMac), across
    // organisations too, so the fill claims each identity once.
    for (const kind of ['hive', 'sensor'] as const)
      for (const [id, o] of this.#map(kind)) this.#identities.set(identityKey(identityOf(kind, o.item)!), id);
    for (const kind of ASSET_KINDS)
      for (const [id, o] of this.#map(kind))
        this.#baseline.set(id, { kind, orgId: o.orgId, json: JSON.stringify(o.item) });
  }

  get version(): number {
    return this.#version;
  }

  get ingestVersion(): number {
    return this.#ingestVersion;
  }

  /** Every organisation's spaces and devices, in catalogue order. */
  snapshot(): AssetSnapshot {
    return {
      sites: this.all('site'),
      buildings: this.all('building'),
      floors: this.all('floor'),
      rooms: this.all('room'),
      zones: this.all('zone'),
      doors: [...this.doors.values()].map((d) => d.item),
      hives: this.all('hive'),
      sensors: this.all('sensor'),
    };
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #fill(o: OrganisationAssets): void {
    const orgId = o.org.id;
    this.orgs.set(orgId, { ...o.org });
    const own = <T>(item: T): Owned<T> => ({ orgId, item: structuredClone(item) });
    for (const x of o.sites) this.sites.set(x.id, own(x));
    for (const x of o.buildings) this.buildings.set(x.id, own(x));
    for (const x of o.floors) this.floors.set(x.id, own(x));
    for (const x of o.rooms) this.rooms.set(x.id, own(x));
    for (const x of o.zones) this.zones.set(x.id, own(x));
    for (const x of o.doors) this.doors.set(x.id, own(x));
    for (const x of o.hives) this.hives.set(x.id, own(x));
    for (const x of o.sensors) this.sensors.set(x.id, own(x));
    for (const x of o.users) this.users.set(x.id, own(x));
    for (const x of o.clients) this.clients.set(x.clientId, own(x));
  }

  #changed(change: CatalogueChange, ingest: boolean): void {
    this.#version++;
    if (ingest) this.#ingestVersion++;
    for (const l of this.#listeners) l(change);
  }

  /** Items of one kind visible to the organisation, in catalogue order. */
  list<K extends AssetKind>(kind: K, orgId: string): Array<AssetOf<K>> {
    const out: Array<AssetOf<K>> = [];
    for (const o of this.#map(kind).values()) if (o.orgId === orgId) out.push(o.item as AssetOf<K>);
    return out;
  }

  /** Items of one kind of every organisation, in catalogue order (ingest, metadata). */
  all<K extends AssetKind>(kind: K): Array<AssetOf<K>> {
    return [...this.#map(kind).values()].map((o) => o.item as AssetOf<K>);
  }

  /** One item of the organisation, or undefined (also for another organisation's id). */
  get<K extends AssetKind>(kind: K, orgId: string, id: string): AssetOf<K> | undefined {
    const o = this.#map(kind).get(id);
    return o && o.orgId === orgId ? (o.item as AssetOf<K>) : undefined;
  }

  /** One item whatever its organisation (the platform's own processing, never a caller's lookup). */
  find<K extends AssetKind>(kind: K, id: string): Owned<AssetOf<K>> | undefined {
    return this.#map(kind).get(id) as Owned<AssetOf<K>> | undefined;
  }

  doorsOf(floorId: string): Door[] {
    return [...this.doors.values()].filter((d) => d.item.floorId === floorId).map((d) => d.item);
  }

  orgName(orgId: string): string | undefined {
    return this.orgs.get(orgId)?.name;
  }

  orgOf(id: string): string | undefined {
    for (const kind of ASSET_KINDS) {
      const o = this.#map(kind).get(id);
      if (o) return o.orgId;
    }
    return undefined;
  }

  /** IANA zone of the site holding a site, building, floor, room, zone, hive or sensor (UTC when unknown). */
  timezoneOf(id: string): string {
    const site = (siteId: string): string => this.sites.get(siteId)?.item.timezone ?? 'UTC';
    const floor = (floorId: string): string => {
      const f = this.floors.get(floorId);
      return f ? site(f.item.siteId) : 'UTC';
    };
    const s = this.sites.get(id);
    if (s) return s.item.timezone;
    const b = this.buildings.get(id);
    if (b) return site(b.item.siteId);
    if (this.floors.has(id)) return floor(id);
    const spaceFloor =
      this.rooms.get(id)?.item.floorId ??
      this.zones.get(id)?.item.floorId ??
      this.sensors.get(id)?.item.floorId ??
      this.hives.get(id)?.item.floorId;
    return spaceFloor !== undefined ? floor(spaceFloor) : 'UTC';
  }

  /**
   * Whether a device identity is free for a new device. The answer is the same whoever holds
   * it (the caller's organisation or another): a refusal must not tell an organisation which
   * serials or MACs exist elsewhere.
   */
  identityFree(identity: DeviceIdentity): boolean {
    return !this.#identities.has(identityKey(identity));
  }

  /**
   * Adds an item to the organisation and links it into its parent's child list. A hive or
   * sensor whose serial or MAC is already held (by any organisation) is refused with
   * `DeviceIdentityTaken` and nothing changes.
   */
  add<K extends AssetKind>(kind: K, orgId: string, item: AssetOf<K>): AssetOf<K> {
    const identity = identityOf(kind, item);
    if (identity !== null) {
      const key = identityKey(identity);
      const holder = this.#identities.get(key);
      if (holder !== undefined && holder !== item.id) throw new DeviceIdentityTaken(identity);
      this.#identities.set(key, item.id);
    }
    (this.#map(kind) as Map<string, Owned<AssetOf<K>>>).set(item.id, { orgId, item });
    this.#link(kind, item);
    this.#changed({ kind, op: 'add', orgId, id: item.id }, kind !== 'site' && kind !== 'building');
    return item;
  }

  /** Changes fields of an item of the organisation; undefined when it has no such item. */
  update<K extends AssetKind>(kind: K, orgId: string, id: string, patch: Partial<AssetOf<K>>): AssetOf<K> | undefined {
    const item = this.get(kind, orgId, id);
    if (!item) return undefined;
    // No mutation changes a serial or a MAC; one that did would have to move the identity index.
    if ('serial' in patch || 'mac' in patch)
      throw new RangeError(`catalogue: a ${kind}'s device identity cannot be updated`);
    Object.assign(item, patch);
    this.#changed(
      { kind, op: 'update', orgId, id },
      Object.keys(patch).some((k) => !DESCRIPTIVE_FIELDS.has(k)),
    );
    return item;
  }

  deleteSensor(orgId: string, id: string): Sensor | undefined {
    const s = this.get('sensor', orgId, id);
    if (!s) return undefined;
    this.sensors.delete(id);
    this.#identities.delete(identityKey({ kind: 'sensor', mac: s.mac }));
    const floor = this.floors.get(s.floorId)?.item;
    if (floor) floor.sensorIds = floor.sensorIds.filter((x) => x !== id);
    this.#changed({ kind: 'sensor', op: 'delete', orgId, id }, true);
    return s;
  }

  createTag(orgId: string, name: string): Tag {
    const tag: Tag = { id: `tag_${randomBytes(8).toString('hex')}`, name, orgId, spaceIds: new Set() };
    this.tags.set(tag.id, tag);
    this.#changed({ kind: 'tag', op: 'add', orgId, id: tag.id }, false);
    return tag;
  }

  /** Adds (`on`) or removes spaces from a tag of the organisation. */
  tagSpaces(orgId: string, tagId: string, spaceIds: readonly string[], on: boolean): Tag | undefined {
    const tag = this.tag(orgId, tagId);
    if (!tag) return undefined;
    for (const id of spaceIds)
      if (on) tag.spaceIds.add(id);
      else tag.spaceIds.delete(id);
    this.#changed({ kind: 'tag', op: 'update', orgId, id: tagId }, false);
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
    return (
      this.get('floor', orgId, id) !== undefined ||
      this.get('room', orgId, id) !== undefined ||
      this.get('zone', orgId, id) !== undefined
    );
  }

  /** What the organisation changed against the fill: added or changed items, deletions, tags. */
  overlay(orgId: string): CatalogueOverlay {
    const out: CatalogueOverlay = { changed: [], deleted: [], tags: [] };
    for (const kind of ASSET_KINDS) {
      for (const [id, o] of this.#map(kind)) {
        if (o.orgId !== orgId) continue;
        const json = JSON.stringify(o.item);
        if (this.#baseline.get(id)?.json !== json)
          out.changed.push({ kind, item: JSON.parse(json) as CatalogueOverlay['changed'][number]['item'] });
      }
    }
    for (const [id, b] of this.#baseline)
      if (b.orgId === orgId && !this.#map(b.kind).has(id)) out.deleted.push({ kind: b.kind, id });
    for (const t of this.tags.values())
      if (t.orgId === orgId) out.tags.push({ id: t.id, name: t.name, spaceIds: [...t.spaceIds] });
    return out;
  }

  /**
   * Re-applies a persisted overlay (at start, before serving). Items of other organisations
   * are never touched, and a hive or sensor whose serial or MAC another device holds is not
   * re-applied (returned as refused): overlays written before identities were unique may hold
   * a clone of another organisation's device, which must not be credited its uplinks.
   */
  applyOverlay(orgId: string, overlay: CatalogueOverlay): RefusedOverlayItem[] {
    const refused: RefusedOverlayItem[] = [];
    for (const { kind, id } of overlay.deleted) {
      const existing = this.#map(kind).get(id);
      if (existing?.orgId !== orgId) continue;
      const identity = identityOf(kind, existing.item);
      if (identity !== null && this.#identities.get(identityKey(identity)) === id)
        this.#identities.delete(identityKey(identity));
      this.#map(kind).delete(id);
    }
    for (const { kind, item } of overlay.changed) {
      const existing = this.#map(kind).get(item.id);
      if (existing && existing.orgId !== orgId) continue;
      const identity = identityOf(kind, item);
      if (identity !== null) {
        const key = identityKey(identity);
        const holder = this.#identities.get(key);
        if (holder !== undefined && holder !== item.id) {
          refused.push({ kind, id: item.id, reason: new DeviceIdentityTaken(identity).message });
          continue;
        }
        const previous = existing ? identityOf(kind, existing.item) : null;
        if (previous !== null && this.#identities.get(identityKey(previous)) === item.id)
          this.#identities.delete(identityKey(previous));
        this.#identities.set(key, item.id);
      }
      this.#map(kind).set(item.id, { orgId, item });
    }
    if (refused.length > 0) this.#dropOrphans(orgId, refused);
    for (const t of overlay.tags) this.tags.set(t.id, { id: t.id, name: t.name, orgId, spaceIds: new Set(t.spaceIds) });
    this.#changed({ kind: 'site', op: 'update', orgId, id: '' }, true);
    return refused;
  }

  /** After refusals: sensors of a refused hive go too, and floors stop listing what is not there. */
  #dropOrphans(orgId: string, refused: RefusedOverlayItem[]): void {
    for (const [id, o] of this.sensors) {
      if (o.orgId !== orgId || this.hives.has(o.item.hiveId)) continue;
      this.sensors.delete(id);
      if (this.#identities.get(identityKey({ kind: 'sensor', mac: o.item.mac })) === id)
        this.#identities.delete(identityKey({ kind: 'sensor', mac: o.item.mac }));
      refused.push({ kind: 'sensor', id, reason: `its hive ${o.item.hiveId} was not re-applied` });
    }
    for (const f of this.floors.values()) {
      if (f.orgId !== orgId) continue;
      f.item.hiveIds = f.item.hiveIds.filter((x) => this.hives.has(x));
      f.item.sensorIds = f.item.sensorIds.filter((x) => this.sensors.has(x));
    }
  }

  /** A new item's id in its parent's child list (the parent is the caller's to have checked). */
  #link(kind: AssetKind, item: { id: string }): void {
    const floorOf = (floorId: string): Floor | undefined => this.floors.get(floorId)?.item;
    switch (kind) {
      case 'floor':
        this.buildings.get((item as Floor).buildingId)?.item.floorIds.push(item.id);
        return;
      case 'building':
        this.sites.get((item as Building).siteId)?.item.buildingIds.push(item.id);
        return;
      case 'room':
        floorOf((item as Room).floorId)?.roomIds.push(item.id);
        return;
      case 'zone':
        floorOf((item as Zone).floorId)?.zoneIds.push(item.id);
        return;
      case 'hive':
        floorOf((item as Hive).floorId)?.hiveIds.push(item.id);
        return;
      case 'sensor':
        floorOf((item as Sensor).floorId)?.sensorIds.push(item.id);
        return;
      case 'site':
        return;
    }
  }

  #map(kind: AssetKind): Map<string, Owned<unknown>> {
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
