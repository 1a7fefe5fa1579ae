import type { Vec2 } from '../core/geometry.js';
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
  readonly links: MeshLink[];
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

export function buildHiveMesh(model: ScenarioModel, hiveId: string, radio: RadioParams): HiveMesh {
  const hive = model.hives.find((h) => h.id === hiveId);
  if (!hive) throw new RangeError(`no hive ${hiveId}`);
  const levels = new Map(model.floors.map((f) => [f.id, f.level]));
  const roomsByFloor = new Map<string, Array<(typeof model.rooms)[number]['polygon']>>();
  for (const r of model.rooms) roomsByFloor.set(r.floorId, [...(roomsByFloor.get(r.floorId) ?? []), r.polygon]);
  const ends = [
    { id: hive.id, position: hive.position, floorId: hive.floorId },
    ...model.sensors.filter((s) => s.hiveId === hiveId).map((s) => ({ id: s.id, position: s.center, floorId: s.floorId })),
  ];
  const nodes: MeshNode[] = ends.map((e) => ({ id: e.id, position: e.position, level: levels.get(e.floorId) ?? 0, links: [] }));
  for (let i = 0; i < ends.length; i++) {
    for (let j = i + 1; j < ends.length; j++) {
      const a = ends[i]!;
      const b = ends[j]!;
      const walls = a.floorId === b.floorId ? wallsCrossed(a.position, b.position, roomsByFloor.get(a.floorId) ?? []) : 2;
      const d = Math.hypot(a.position[0] - b.position[0], a.position[1] - b.position[1]);
      const rssi = rssiDbm(radio, d, walls, Math.abs(nodes[i]!.level - nodes[j]!.level));
      const pdr = pdrAt(radio, rssi);
      if (pdr < MIN_USABLE_PDR) continue;
      nodes[i]!.links.push({ to: j, pdr, rssi });
      nodes[j]!.links.push({ to: i, pdr, rssi });
    }
  }
  for (const n of nodes) n.links.sort((x, y) => y.pdr - x.pdr || x.to - y.to);
  return { hiveId, nodes, index: new Map(nodes.map((n, i) => [n.id, i])) };
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
    for (const l of mesh.nodes[u]!.links) {
      if (down.has(mesh.nodes[l.to]!.id)) continue;
      const c = cost[u]! + 1 / l.pdr;
      if (c < cost[l.to]!) cost[l.to] = c;
    }
  }
  const parents = mesh.nodes.map((node, i) => {
    if (i === 0 || cost[i] === Infinity || down.has(node.id)) return [];
    return node.links
      .filter((l) => cost[l.to]! < cost[i]! && !down.has(mesh.nodes[l.to]!.id))
      .sort((a, b) => cost[a.to]! + 1 / a.pdr - (cost[b.to]! + 1 / b.pdr) || a.to - b.to)
      .slice(0, 2);
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
