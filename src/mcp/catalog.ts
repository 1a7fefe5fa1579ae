import type { Clock } from '../core/clock.js';
import { Cached, type CallScope } from './cache.js';
import { NO_CALL, type Call } from './call.js';
import { notFound } from './errors.js';
import { EventLog } from './events.js';
import type { Platform } from './platform.js';

/**
 * The organisation's assets as the tools see them, read through GraphQL and cached
 * (platform-reference §5: topology ~10 min). Spaces (sites → zones) come from one small query;
 * devices (hives, sensors: 30,300 on the fleet) from a second, fetched only by the tools that
 * need them. Every id a tool is given is resolved here: an id that is not in the caller's
 * organisation's catalogue is NOT_FOUND, so another organisation's id never reaches a data call.
 */
export type SpaceKind = 'site' | 'building' | 'floor' | 'room' | 'zone';
export type DeviceKind = 'hive' | 'sensor';
export type AssetKind = SpaceKind | DeviceKind;

/** Each kind's plural: the GraphQL list field that reads it, and its segment of a resource URI. */
export const ASSET_LISTS = {
  site: 'sites',
  building: 'buildings',
  floor: 'floors',
  room: 'rooms',
  zone: 'zones',
  hive: 'hives',
  sensor: 'sensors',
} as const satisfies Record<AssetKind, string>;

export interface Ref {
  id: string;
  name: string;
}

export interface Capacity {
  max: number | null;
  mid: number | null;
}

export interface Asset {
  id: string;
  kind: AssetKind;
  name: string;
  parentId: string | null;
  childIds: string[];
  /** The site's IANA zone. */
  timezone: string;
  /** Names from the site down to this asset. */
  path: string[];
  capacity: Capacity | null;
  tags: Ref[];
  /** The GraphQL record's other scalar fields, as the API returned them. */
  fields: Record<string, unknown>;
}

export const SPACES_QUERY = `query McpSpaces { sites { data { id name timezone siteNumber customID
  buildings { id name capacity { max mid } buildingNumber customID address { lines country }
    floors { id name floorNumber customID tags { id name }
      rooms { id name customID capacity { max mid } tags { id name } }
      zones { id name room_id customID tags { id name } } } } } } }`;

export const DEVICES_QUERY = `query McpDevices {
  hives { data { id name serial_number floor_id room_id isOnline isStreaming lastHeartbeat hiveType hiveVersion } }
  sensors { data { id name mode model mac_address floor_id room_id hive_id is_online is_streaming last_heartbeat
    power_type battery_change_by_date next_battery_change_date battery_level } } }`;

type Gql = Record<string, unknown> & { id: string; name: string };
interface SpacesData {
  sites: {
    data: Array<
      Gql & {
        timezone: string;
        buildings: Array<
          Gql & {
            capacity: Capacity | null;
            floors: Array<
              Gql & {
                tags: Ref[];
                rooms: Array<Gql & { capacity: Capacity | null; tags: Ref[] }>;
                zones: Array<Gql & { room_id: string | null; tags: Ref[] }>;
              }
            >;
          }
        >;
      }
    >;
  };
}
interface DevicesData {
  hives: { data: Array<Gql & { floor_id: string; room_id: string | null }> };
  sensors: { data: Array<Gql & { floor_id: string; room_id: string | null; hive_id: string }> };
}

function scalars(x: Gql, drop: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(x).filter(([k, v]) => !drop.includes(k) && (v === null || typeof v !== 'object' || k === 'address')),
  );
}

export class Catalog {
  readonly assets = new Map<string, Asset>();
  readonly siteIds: string[] = [];

  static fromSpaces(data: SpacesData): Catalog {
    const c = new Catalog();
    for (const s of data.sites.data) {
      c.siteIds.push(s.id);
      const tz = s.timezone;
      c.#add(s, 'site', null, tz, null, [], ['buildings']);
      for (const b of s.buildings) {
        c.#add(b, 'building', s.id, tz, b.capacity, [], ['floors', 'capacity']);
        for (const f of b.floors) {
          c.#add(f, 'floor', b.id, tz, null, f.tags, ['rooms', 'zones', 'tags']);
          for (const r of f.rooms) c.#add(r, 'room', f.id, tz, r.capacity, r.tags, ['capacity', 'tags']);
          // A zone inside a room hangs under the room, else under the floor.
          for (const z of f.zones)
            c.#add(z, 'zone', z.room_id && c.assets.has(z.room_id) ? z.room_id : f.id, tz, null, z.tags, ['tags']);
        }
      }
    }
    return c;
  }

  addDevices(data: DevicesData): void {
    for (const h of data.hives.data)
      if (this.assets.has(h.floor_id)) this.#add(h, 'hive', h.floor_id, this.timezoneOf(h.floor_id), null, [], []);
    for (const s of data.sensors.data) {
      const parent = s.room_id && this.assets.has(s.room_id) ? s.room_id : s.floor_id;
      if (this.assets.has(parent)) this.#add(s, 'sensor', parent, this.timezoneOf(parent), null, [], []);
    }
  }

  #add(
    x: Gql,
    kind: AssetKind,
    parentId: string | null,
    timezone: string,
    capacity: Capacity | null,
    tags: Ref[],
    drop: readonly string[],
  ): void {
    const parent = parentId ? this.assets.get(parentId) : undefined;
    const asset: Asset = {
      id: x.id,
      kind,
      name: x.name,
      parentId,
      childIds: [],
      timezone,
      path: [...(parent?.path ?? []), x.name],
      capacity,
      tags,
      fields: scalars(x, drop),
    };
    this.assets.set(x.id, asset);
    parent?.childIds.push(x.id);
  }

  timezoneOf(id: string): string {
    return this.assets.get(id)?.timezone ?? 'UTC';
  }

  /** The asset, or NOT_FOUND naming the kinds that were expected. */
  get(id: string, kinds?: readonly AssetKind[]): Asset {
    const a = this.assets.get(id);
    if (!a) throw notFound(`no ${kinds ? kinds.join('/') : 'asset'} with id ${id} in this organisation`);
    if (kinds && !kinds.includes(a.kind)) throw notFound(`${id} is a ${a.kind}; expected a ${kinds.join('/')}`);
    return a;
  }

  /** Every id resolved, or one NOT_FOUND listing all the unknown ones. */
  getAll(ids: readonly string[], kinds?: readonly AssetKind[]): Asset[] {
    const missing = ids.filter((id) => !this.assets.has(id));
    if (missing.length > 0) throw notFound(`not in this organisation: ${missing.join(', ')}`);
    return ids.map((id) => this.get(id, kinds));
  }

  /** The asset and everything below it, depth first. */
  *descendants(id: string): Generator<Asset> {
    const a = this.assets.get(id);
    if (!a) return;
    yield a;
    for (const c of a.childIds) yield* this.descendants(c);
  }

  parentOf(a: Asset): Asset | null {
    return a.parentId ? (this.assets.get(a.parentId) ?? null) : null;
  }

  /** The nearest ancestor (or self) of a kind. */
  ancestor(a: Asset, kind: AssetKind): Asset | null {
    for (let x: Asset | null = a; x; x = this.parentOf(x)) if (x.kind === kind) return x;
    return null;
  }
}

/**
 * Per-organisation cache of the catalogue (cache.ts: reused within a call, refreshed in the
 * background when expired). A miss — an id the cached catalogue lacks, perhaps just created —
 * rereads it, at most once every 30 s.
 */
export class CatalogCache {
  readonly #clock: Clock;
  /** The spaces query's answer, shared by the spaces-only and the with-devices catalogues. */
  readonly #raw: Cached<SpacesData>;
  readonly #devices: Cached<Catalog>;
  #spaces: { source: Promise<SpacesData>; catalog: Promise<Catalog> } | null = null;

  constructor(platform: Platform, clock: Clock, ttlMs: number, scope: CallScope, events: EventLog = new EventLog()) {
    this.#clock = clock;
    const refreshed = (what: string) => (err: unknown) =>
      err === null
        ? events.emit('info', 'catalogue', `${what} refreshed`)
        : events.emit(
            'warning',
            'catalogue',
            `${what} refresh failed, the previous one is kept: ${err instanceof Error ? err.message : String(err)}`,
          );
    const opts = { clock, ttlMs, scope, staleWhileRevalidate: true };
    this.#raw = new Cached(() => platform.query<SpacesData>(SPACES_QUERY), {
      ...opts,
      onRefresh: refreshed('spaces'),
      label: 'spaces read',
    });
    this.#devices = new Cached(
      () =>
        Promise.all([this.#raw.get(), platform.query<DevicesData>(DEVICES_QUERY)]).then(([s, d]) => {
          const c = Catalog.fromSpaces(s);
          c.addDevices(d);
          return c;
        }),
      { ...opts, onRefresh: refreshed('devices'), label: 'spaces and devices read' },
    );
  }

  /** Forget both catalogues: the next read waits for a fresh one (the catalogue changed: watch.ts). */
  invalidate(): void {
    this.#raw.invalidate();
    this.#devices.invalidate();
  }

  /** The spaces; `call` waits for a load as one step of its progress (cache.ts). */
  async spaces(call: Call = NO_CALL): Promise<Catalog> {
    await this.#raw.get(call);
    const source = this.#raw.get();
    if (this.#spaces?.source !== source) this.#spaces = { source, catalog: source.then((d) => Catalog.fromSpaces(d)) };
    return this.#spaces.catalog;
  }

  /** Spaces and devices together (hardware snapshot, search over sensors, device details). */
  withDevices(call: Call = NO_CALL): Promise<Catalog> {
    return this.#devices.get(call);
  }

  /** Resolves ids against a fresh catalogue when the cached one lacks any (a new asset), at most every 30 s. */
  async resolve(
    ids: readonly string[],
    kinds: readonly AssetKind[],
    devices = false,
    call: Call = NO_CALL,
  ): Promise<{ catalog: Catalog; assets: ReturnType<Catalog['getAll']> }> {
    const load = (): Promise<Catalog> => (devices ? this.withDevices(call) : this.spaces(call));
    let catalog = await load();
    const at = (devices ? this.#devices.readAt : this.#raw.readAt) ?? this.#clock.now();
    if (ids.some((id) => !catalog.assets.has(id)) && this.#clock.now() - at >= 30_000) {
      this.#raw.invalidate();
      this.#devices.invalidate();
      catalog = await load();
    }
    return { catalog, assets: catalog.getAll(ids, kinds) };
  }

  /**
   * What a tool's optional `scope_id` covers: the scope (a site, building or floor) and every
   * asset below it, or without one the whole organisation (scope null).
   */
  async inScope(
    scopeId: string | undefined,
    devices: boolean,
    call: Call = NO_CALL,
  ): Promise<{ scope: Asset | null; assets: Asset[] }> {
    const catalog = devices ? await this.withDevices(call) : await this.spaces(call);
    const scope = scopeId
      ? ((await this.resolve([scopeId], ['site', 'building', 'floor'], devices, call)).assets[0] as Asset)
      : null;
    return { scope, assets: scope ? [...catalog.descendants(scope.id)] : [...catalog.assets.values()] };
  }
}
