import { expect } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { LocalDays } from '../../src/cloud/local-day.js';
import type { SqliteStore } from '../../src/store/sqlite-store.js';
import { trafficSpaces } from '../../src/cloud/traffic-occupancy.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * What a compat answer must agree with: the scenario's assets (GraphQL) and the run's store
 * (reporting, stats), each recomputed here the plain way (per minute, from the stored rows).
 */
type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

export function assetNames(model: ScenarioModel): Map<string, string> {
  const names = new Map<string, string>();
  for (const list of [model.sites, model.buildings, model.floors, model.rooms, model.zones, model.hives, model.sensors])
    for (const x of list) names.set(x.id, x.name);
  return names;
}

/** Every object with an asset id names that asset by its name; snake_case fields equal their camelCase twins. */
export function checkAssets(data: unknown, names: ReadonlyMap<string, string>, extraIds: ReadonlySet<string>): number {
  let seen = 0;
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (!isObj(x)) return;
    if (typeof x.id === 'string') {
      seen++;
      expect(names.has(x.id) || extraIds.has(x.id), `unknown id ${x.id}`).toBe(true);
      if (names.has(x.id) && typeof x.name === 'string') expect(x.name).toBe(names.get(x.id));
    }
    if ('floorID' in x && 'floor_id' in x) expect(x.floorID).toBe(x.floor_id);
    if ('roomID' in x && 'room_id' in x) expect(x.roomID).toBe(x.room_id);
    Object.values(x).forEach(walk);
  };
  walk(data);
  return seen;
}

const PRESENCE = new Set(['floor_occupancy', 'room_occupancy', 'zone_occupancy']);

function aggregate(fn: string, values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  switch (fn) {
    case 'max':
      return Math.max(...values);
    case 'min':
      return Math.min(...values);
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'mean':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'first':
      return values[0] as number;
    case 'last':
      return values[values.length - 1] as number;
    default: {
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
    }
  }
}

/** Raw traffic occupancy at each minute, summed from the stored counts since the local day's first instant. */
export function naiveTrafficOccupancy(
  model: ScenarioModel,
  store: SqliteStore,
  spaceId: string,
  minuteMs: number,
): number | null {
  const space = trafficSpaces(catalogueFromScenario(model).snapshot()).find((s) => s.spaceId === spaceId);
  if (!space) return null;
  const zone = model.sites[0]?.timezone ?? 'UTC';
  const dayStart = new LocalDays(zone).dayStartOf(minuteMs);
  let v = 0;
  for (const t of space.terms)
    for (const r of store.trafficMinutes(t.sensorId))
      if (r.minuteMs >= dayStart && r.minuteMs <= minuteMs) v += t.sign * (r.in - r.out);
  return v;
}

/** A flat reporting point agrees with the store: presence by the window function, traffic counts by sum, raw traffic occupancy from midnight. */
export function checkPoint(p: Obj, fn: string, calibrated: boolean, model: ScenarioModel, store: SqliteStore): void {
  for (const k of [
    'field',
    'measurement',
    'time',
    'start',
    'stop',
    'value',
    'timezone_offset',
    'building_id',
    'building_name',
    'space_id',
    'space_name',
    'room_id',
    'room_name',
    'zone_id',
    'zone_name',
    'sensor_id',
    'hive_id',
    'hive_serial',
    'mac_address',
    'tag_id',
  ]) {
    expect(p, `point lacks ${k}`).toHaveProperty(k);
  }
  const m = p.measurement as string;
  const from = Date.parse(p.start as string);
  const to = Date.parse(p.stop as string);
  if (PRESENCE.has(m)) {
    const id = (m === 'zone_occupancy' ? p.zone_id : m === 'room_occupancy' ? p.room_id : p.space_id) as string;
    const values = store.presenceSeries(id, '1m', from, to).map((s) => s.value);
    expect(values.length, `${m} ${id} ${p.start}: no stored minutes`).toBeGreaterThan(0);
    expect(p.value as number).toBeCloseTo(aggregate(fn, values), 3);
  } else if (m === 'traffic') {
    const rows = store.trafficMinutes(p.sensor_id as string).filter((r) => r.minuteMs >= from && r.minuteMs < to);
    const want = rows.reduce((a, r) => a + (p.field === 'in' ? r.in : r.out), 0);
    if (fn === 'sum') expect(p.value).toBe(want);
  } else if (!calibrated) {
    // Raw traffic occupancy, window max: the largest per-minute value counted from local midnight.
    const id = (m === 'traffic_room_occupancy' ? p.room_id : p.space_id) as string;
    const per: number[] = [];
    for (let t = from; t < to; t += 60_000) per.push(naiveTrafficOccupancy(model, store, id, t) as number);
    if (fn === 'max') expect(p.value).toBe(Math.max(...per));
  } else {
    expect(p.value as number).toBeGreaterThanOrEqual(0);
  }
}
