import { groupBy } from '../core/group-by.js';
import type { Polygon, Vec2 } from '../core/geometry.js';
import type { ScenarioModel } from '../scenario/model.js';
import { MIN_USABLE_PDR, pdrAt, rssiDbm, wallsCrossed, type RadioParams } from './radio.js';

/**
 * Routing of one hive's mesh, pure: nodes are the hive (index 0) and its sensors; each
 * sensor joins with up to two parents closer to the hive (by expected transmissions, ETX),
 * the way RPL picks a preferred and a backup parent.
 */
export interface MeshLink {
  readonly to: number;
  readonly pdr: number;
  readonly rssi: number;
}

export interface MeshNode {
  /** Sensor id, or the hive id for node 0. */
  readonly id: string;
  readonly position: Vec2;
  readonly level: number;
  /** Usable links, strongest first. */
  readonly links: LinkTable;
}

/**
 * A node's usable links, strongest first (pdr descending, then `to`), as parallel arrays:
 * a fleet's meshes hold millions of links (a 50-sensor hive ~2,500), which as one object
 * each cost ~100 bytes; here 20. `MeshLink` objects are made only for routing's parents.
 */
export interface LinkTable {
  readonly to: Int32Array;
  readonly pdr: Float64Array;
  readonly rssi: Float64Array;
}

function linkAt(links: LinkTable, k: number): MeshLink {
  return { to: links.to[k]!, pdr: links.pdr[k]!, rssi: links.rssi[k]! };
}

export interface HiveMesh {
  readonly hiveId: string;
  readonly nodes: readonly MeshNode[];
  readonly index: ReadonlyMap<string, number>;
}

export interface Routing {
  /** Per node: parents, preferred first (empty for the hive and for unreachable nodes). */
  readonly parents: ReadonlyArray<readonly MeshLink[]>;
  /** Per node: hops to the hive via preferred parents (0 hive, Infinity unreachable). */
  readonly hops: readonly number[];
  /** Per node: frames it forwards for its descendants plus its own, relative units. */
  readonly load: readonly number[];
}

/**
 * The fleet's lookups that every hive's mesh needs, built once per model (not per hive:
 * scanning every sensor and room for each hive made start-up grow with hives × sensors).
 */
export interface FleetIndex {
  readonly hives: ReadonlyMap<string, ScenarioModel['hives'][number]>;
  readonly sensorsOfHive: ReadonlyMap<string, Array<ScenarioModel['sensors'][number]>>;
  readonly roomsOfFloor: ReadonlyMap<string, Polygon[]>;
  readonly levels: ReadonlyMap<string, number>;
}

const fleetIndexes = new WeakMap<ScenarioModel, FleetIndex>();

export function fleetIndex(model: ScenarioModel): FleetIndex {
  let index = fleetIndexes.get(model);
  if (!index) {
    const roomsOfFloor = new Map<string, Polygon[]>();
    for (const [floorId, rooms] of groupBy(model.rooms, (r) => r.floorId))
      roomsOfFloor.set(
        floorId,
        rooms.map((r) => r.polygon),
      );
    index = {
      hives: new Map(model.hives.map((h) => [h.id, h] as const)),
      sensorsOfHive: groupBy(model.sensors, (s) => s.hiveId),
      roomsOfFloor,
      levels: new Map(model.floors.map((f) => [f.id, f.level])),
    };
    fleetIndexes.set(model, index);
  }
  return index;
}

/**
 * Largest distance at which a link can still be usable (no walls, same level), with a margin:
 * pairs farther apart are not evaluated. RSSI falls with distance, so the exact test below
 * decides every pair within it as before.
 */
function usableRangeM(radio: RadioParams): number {
  for (let d = 1; d < 1e6; d *= 1.25) if (pdrAt(radio, rssiDbm(radio, d, 0, 0)) < MIN_USABLE_PDR) return d * 1.25 + 1;
  return Infinity;
}

export function buildHiveMesh(model: ScenarioModel, hiveId: string, radio: RadioParams): HiveMesh {
  const fleet = fleetIndex(model);
  const hive = fleet.hives.get(hiveId);
  if (!hive) throw new RangeError(`no hive ${hiveId}`);
  const ends = [
    { id: hive.id, position: hive.position, floorId: hive.floorId },
    ...(fleet.sensorsOfHive.get(hiveId) ?? []).map((s) => ({ id: s.id, position: s.center, floorId: s.floorId })),
  ];
  const levels = ends.map((e) => fleet.levels.get(e.floorId) ?? 0);
  const found: MeshLink[][] = ends.map(() => []);
  // Candidate pairs from a grid of range-sized cells: each node meets the nodes of its own
  // and the 8 neighbouring cells, once per pair (j > i); links are sorted below, so the order
  // in which pairs are found does not matter.
  const range = usableRangeM(radio);
  const grid = Number.isFinite(range)
    ? groupBy(ends.keys(), (i) => cellKey(ends[i]!.position, range, 0, 0))
    : new Map([['all', [...ends.keys()]]]);
  for (let i = 0; i < ends.length; i++) {
    const a = ends[i]!;
    const candidates = Number.isFinite(range)
      ? NEIGHBOURS.flatMap(([dx, dy]) => grid.get(cellKey(a.position, range, dx, dy)) ?? [])
      : (grid.get('all') ?? []);
    for (const j of candidates) {
      if (j <= i) continue;
      const b = ends[j]!;
      const walls =
        a.floorId === b.floorId ? wallsCrossed(a.position, b.position, fleet.roomsOfFloor.get(a.floorId) ?? []) : 2;
      const d = Math.hypot(a.position[0] - b.position[0], a.position[1] - b.position[1]);
      const rssi = rssiDbm(radio, d, walls, Math.abs(levels[i]! - levels[j]!));
      const pdr = pdrAt(radio, rssi);
      if (pdr < MIN_USABLE_PDR) continue;
      found[i]!.push({ to: j, pdr, rssi });
      found[j]!.push({ to: i, pdr, rssi });
    }
  }
  const nodes: MeshNode[] = ends.map((e, i) => {
    const list = found[i]!.sort((x, y) => y.pdr - x.pdr || x.to - y.to);
    found[i] = [];
    const links = {
      to: Int32Array.from(list, (l) => l.to),
      pdr: Float64Array.from(list, (l) => l.pdr),
      rssi: Float64Array.from(list, (l) => l.rssi),
    };
    return { id: e.id, position: e.position, level: levels[i]!, links };
  });
  return { hiveId, nodes, index: new Map(nodes.map((n, i) => [n.id, i])) };
}

const NEIGHBOURS: ReadonlyArray<readonly [number, number]> = [
  [-1, -1],
  [0, -1],
  [1, -1],
  [-1, 0],
  [0, 0],
  [1, 0],
  [-1, 1],
  [0, 1],
  [1, 1],
];

function cellKey(p: Vec2, size: number, dx: number, dy: number): string {
  return `${Math.floor(p[0] / size) + dx}:${Math.floor(p[1] / size) + dy}`;
}

/**
 * Routes over the nodes not in `down` (offline sensors): Dijkstra by ETX from the hive, then
 * up to two parents per node among neighbours strictly closer to the hive.
 */
export function route(mesh: HiveMesh, down: ReadonlySet<string>): Routing {
  const n = mesh.nodes.length;
  const cost = new Array<number>(n).fill(Infinity);
  const done = new Array<boolean>(n).fill(false);
  cost[0] = 0;
  for (;;) {
    let u = -1;
    for (let i = 0; i < n; i++) if (!done[i] && cost[i]! < Infinity && (u < 0 || cost[i]! < cost[u]!)) u = i;
    if (u < 0) break;
    done[u] = true;
    const links = mesh.nodes[u]!.links;
    for (let k = 0; k < links.to.length; k++) {
      const to = links.to[k]!;
      if (down.has(mesh.nodes[to]!.id)) continue;
      const c = cost[u]! + 1 / links.pdr[k]!;
      if (c < cost[to]!) cost[to] = c;
    }
  }
  const parents = mesh.nodes.map((node, i) => {
    if (i === 0 || cost[i] === Infinity || down.has(node.id)) return [];
    const closer: MeshLink[] = [];
    for (let k = 0; k < node.links.to.length; k++) {
      const to = node.links.to[k]!;
      if (cost[to]! < cost[i]! && !down.has(mesh.nodes[to]!.id)) closer.push(linkAt(node.links, k));
    }
    return closer.sort((a, b) => cost[a.to]! + 1 / a.pdr - (cost[b.to]! + 1 / b.pdr) || a.to - b.to).slice(0, 2);
  });
  const hops = hopsOf(parents);
  const load = new Array<number>(n).fill(1);
  // Children before parents: deepest first, so each node's load includes its subtree.
  const order = [...hops.keys()].filter((i) => hops[i]! < Infinity).sort((a, b) => hops[b]! - hops[a]!);
  for (const i of order) {
    const p = parents[i]![0];
    if (p && p.to !== 0) load[p.to]! += load[i]!;
  }
  return { parents, hops, load };
}

function hopsOf(parents: ReadonlyArray<readonly MeshLink[]>): number[] {
  const hops = new Array<number>(parents.length).fill(Infinity);
  hops[0] = 0;
  const visit = (i: number, depth: number): number => {
    if (hops[i]! < Infinity) return hops[i]!;
    const p = parents[i]![0];
    if (!p || depth > parents.length) return Infinity;
    hops[i] = visit(p.to, depth + 1) + 1;
    return hops[i]!;
  };
  for (let i = 1; i < parents.length; i++) visit(i, 0);
  return hops;
}
