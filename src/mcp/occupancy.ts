import type { Clock } from '../core/clock.js';
import { MINUTE_MS, floorToMinute, isoUtc } from '../core/time.js';
import { Cached, type CallScope } from './cache.js';
import { NO_CALL, cancelled, type Call } from './call.js';
import type { Asset, CatalogCache } from './catalog.js';
import type { Platform } from './platform.js';

/**
 * Current occupancy (platform-reference §5): the median of a space's last five one-minute
 * values, presence preferred, traffic-based (calibrated) when the space has no presence data.
 *
 * "Now" is the platform's present, not the wall clock: a simulated run's data can lie months
 * away from today, so the present is the organisation's newest hive heartbeat (as the API's
 * device status reads it, docs/api.md), and the wall clock only when no hive was ever heard.
 * The last five minutes are the five newest complete minutes with a value within the ten
 * before the present minute (a minute still being recomputed is left out, spec §6 rule 1).
 */
export type Source = 'presence' | 'traffic';
export type SourceChoice = Source | 'auto';

export interface MinutePoint {
  time: string;
  value: number;
}

export interface CurrentOccupancy {
  id: string;
  occupancy: number | null;
  source: Source | null;
  minutes: MinutePoint[];
}

export const LOOKBACK_MINUTES = 10;
export const MEDIAN_OF = 5;

export interface ReportPoint {
  time: string;
  start?: string;
  value: number | null;
  field?: string;
  space_id?: string;
  room_id?: string;
  zone_id?: string;
  sensor_id?: string;
}

export const PRESENCE_MEASUREMENT = {
  floor: 'floor_occupancy',
  room: 'room_occupancy',
  zone: 'zone_occupancy',
} as const;
export const TRAFFIC_MEASUREMENT = { floor: 'traffic_floor_occupancy', room: 'traffic_room_occupancy' } as const;
export const FILTER_KEY = { floor: 'spaces', room: 'rooms', zone: 'zones' } as const;
const POINT_ID = { floor: 'space_id', room: 'room_id', zone: 'zone_id' } as const;

type SpaceAsset = Asset & { kind: 'floor' | 'room' | 'zone' };
export const isOccupancySpace = (a: Asset): a is SpaceAsset =>
  a.kind === 'floor' || a.kind === 'room' || a.kind === 'zone';

/** The floors, rooms and zones `ids` name, as the occupancy tools take them (NOT_FOUND for an id of another kind). */
export async function occupancySpaces(
  catalog: CatalogCache,
  ids: readonly string[],
  call: Call,
): Promise<SpaceAsset[]> {
  const { assets } = await catalog.resolve(ids, ['floor', 'room', 'zone'], false, call);
  return assets.filter(isOccupancySpace);
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The id a reporting point belongs to, for a space of the kind. */
export function pointId(p: ReportPoint, kind: 'floor' | 'room' | 'zone'): string | undefined {
  return p[POINT_ID[kind]];
}

export class OccupancyReader {
  readonly #platform: Platform;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { at: number; value: CurrentOccupancy }>();
  readonly #present: Cached<number>;

  constructor(platform: Platform, clock: Clock, ttlMs: number, scope: CallScope) {
    this.#platform = platform;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    // The present moves with a live feed: no stale answers for it.
    this.#present = new Cached(
      () =>
        platform
          .query<{ hives: { data: Array<{ lastHeartbeat: string | null }> } }>(
            'query McpPresent { hives { data { lastHeartbeat } } }',
          )
          .then((d) => {
            const beats = d.hives.data
              .map((h) => (h.lastHeartbeat ? Date.parse(h.lastHeartbeat) : NaN))
              .filter((t) => Number.isFinite(t));
            return beats.length > 0 ? Math.max(...beats) : clock.now();
          }),
      { clock, ttlMs, scope, label: "the platform's present read" },
    );
  }

  /** The platform's present (epoch ms): newest hive heartbeat, else the clock. */
  present(call: Call = NO_CALL): Promise<number> {
    return this.#present.get(call);
  }

  /** Current occupancy of each space, in the order given. */
  async current(
    spaces: readonly Asset[],
    choice: SourceChoice = 'auto',
    call: Call = NO_CALL,
  ): Promise<{ asOf: string; results: CurrentOccupancy[] }> {
    const present = await this.present(call);
    const stop = floorToMinute(present);
    const now = this.#clock.now();
    const key = (id: string): string => `${choice}:${id}`;
    const known = new Map<string, CurrentOccupancy>();
    for (const s of spaces) {
      const c = this.#cache.get(key(s.id));
      if (c && now - c.at < this.#ttlMs) known.set(s.id, c.value);
    }
    const todo = spaces.filter(isOccupancySpace).filter((s) => !known.has(s.id));
    if (todo.length > 0) {
      const got = new Map<string, CurrentOccupancy>();
      if (choice !== 'traffic') for (const r of await this.#read(todo, 'presence', stop, call)) got.set(r.id, r);
      const needTraffic = todo.filter(
        (s) => s.kind !== 'zone' && (choice === 'traffic' || (choice === 'auto' && got.get(s.id)?.occupancy == null)),
      );
      if (needTraffic.length > 0)
        for (const r of await this.#read(needTraffic, 'traffic', stop, call))
          if (r.occupancy !== null || !got.has(r.id)) got.set(r.id, r);
      for (const s of todo) {
        const value = got.get(s.id) ?? { id: s.id, occupancy: null, source: null, minutes: [] };
        known.set(s.id, value);
        if (this.#ttlMs > 0) this.#cache.set(key(s.id), { at: now, value });
      }
    }
    const results = spaces.map((s) => known.get(s.id) ?? { id: s.id, occupancy: null, source: null, minutes: [] });
    return { asOf: isoUtc(stop), results };
  }

  /** One reporting request per measurement and time zone (one progress step each): 1m windows over the look-back. */
  async #read(spaces: readonly SpaceAsset[], source: Source, stop: number, call: Call): Promise<CurrentOccupancy[]> {
    const groups = new Map<string, SpaceAsset[]>();
    for (const s of spaces) {
      if (source === 'traffic' && s.kind === 'zone') continue;
      const k = `${s.kind}|${s.timezone}`;
      groups.set(k, [...(groups.get(k) ?? []), s]);
    }
    const out: CurrentOccupancy[] = [];
    call.progress.plan(groups.size);
    for (const group of groups.values()) {
      if (call.signal.aborted) throw cancelled(call.signal);
      const first = group[0] as SpaceAsset;
      const kind = first.kind;
      const measurement =
        source === 'presence' ? PRESENCE_MEASUREMENT[kind] : TRAFFIC_MEASUREMENT[kind as 'floor' | 'room'];
      const points = await this.#platform.report<ReportPoint>(
        {
          window: { every: '1m', function: 'max', timezone: first.timezone },
          filter: {
            measurements: [measurement],
            [FILTER_KEY[kind]]: { eq: group.map((s) => s.id) },
            start: isoUtc(stop - LOOKBACK_MINUTES * MINUTE_MS),
            stop: isoUtc(stop),
            ...(source === 'traffic' ? { calibrated: true } : {}),
          },
        },
        call,
      );
      call.progress.step(`${source} occupancy of ${group.length} ${kind}(s) read`);
      const byId = new Map<string, MinutePoint[]>();
      for (const p of points) {
        const id = pointId(p, kind);
        if (id === undefined || p.value === null) continue;
        byId.set(id, [...(byId.get(id) ?? []), { time: p.start ?? p.time, value: p.value }]);
      }
      for (const s of group) {
        const minutes = (byId.get(s.id) ?? [])
          .sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
          .slice(-MEDIAN_OF);
        out.push({
          id: s.id,
          occupancy: median(minutes.map((m) => m.value)),
          source: minutes.length > 0 ? source : null,
          minutes,
        });
      }
    }
    return out;
  }
}
