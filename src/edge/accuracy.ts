import { footprintTransform, type FootprintTransform } from '../core/footprint.js';
import { groupBy } from '../core/group-by.js';
import { round } from '../core/stats.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import type { PersonState, World, WorldStep } from '../sim/types.js';
import { PresenceTruth } from './accuracy-truth.js';
import { nextEdgePacket } from './edge-packets.js';
import type { EdgeStage } from './stage.js';

/**
 * Detection accuracy of the edge against ground truth, per sensor and overall, the same way
 * at both fidelities: at each presence report instant the true people in the sensor's room
 * and footprint are compared with its detections (count, and position after local→world
 * mapping); each traffic interval's counts are matched with the true crossings of its door,
 * a crossing counted in the next interval still matching (detection lags a few frames).
 */
export type { DetectorAccuracy, PresenceSensorAccuracy, TrafficSensorAccuracy } from './accuracy-types.js';
import type { DetectorAccuracy } from './accuracy-types.js';

/** A detection farther than this from every true person is a false positive, not a located person. */
const MATCH_M = 1;

interface PresenceAcc {
  s: SensorModel;
  /** The sensor's index in `PresenceTruth`. */
  i: number;
  view: FootprintTransform;
  samples: number;
  exact: number;
  absErr: number;
  locSum: number;
  locN: number;
}

interface TrafficAcc {
  s: SensorModel;
  sameSense: boolean;
  /** True crossings since the last report instant, [in, out]. */
  pendingTruth: [number, number];
  pendingTrue: [number, number];
  pendingMeas: [number, number];
  matched: number;
  trueTotal: number;
  measTotal: number;
}

/**
 * Whether a presence sensor can see a person: by default anyone of its room inside its
 * floor footprint; at frame fidelity, anyone whose shoulders are in its field of view
 * (parallax, docs/edge.md) — the detector is scored on the people it can see.
 */
export type InView = (sensor: SensorModel, view: FootprintTransform, p: PersonState) => boolean;

const onFootprint: InView = (_s, view, p) => view.sees(p.x, p.y);

/** Wraps an edge stage so it measures itself; `accuracy()` returns the figures so far. */
export function withAccuracy(model: ScenarioModel, inner: EdgeStage, inView: InView = onFootprint): EdgeStage {
  const doors = new Map(model.doors.map((d) => [d.id, d]));
  const presence = model.sensors.filter((s) => s.mode === 'presence').map((s, i): PresenceAcc => ({ s, i, view: footprintTransform(s), samples: 0, exact: 0, absErr: 0, locSum: 0, locN: 0 }));
  const traffic = model.sensors
    .filter((s) => s.mode === 'traffic' && s.doorId !== null)
    .map((s): TrafficAcc => ({ s, sameSense: s.roomId === doors.get(s.doorId as string)?.toRoomId, pendingTruth: [0, 0], pendingTrue: [0, 0], pendingMeas: [0, 0], matched: 0, trueTotal: 0, measTotal: 0 }));
  // Per sensor index in model.sensors (the flat packets' sensor index): its figures, if scored.
  const byId = new Map<string, PresenceAcc | TrafficAcc>([...presence.map((a) => [a.s.id, a] as const), ...traffic.map((a) => [a.s.id, a] as const)]);
  const accOf = model.sensors.map((s) => byId.get(s.id));
  const trueCounts = new Map<string, [number, number][]>();
  const truth = new PresenceTruth(presence.length);
  return {
    observe(step: WorldStep, world: World) {
      observePresence(presence, truth, model.startMs, step.atMs, world, inView);
      // Crossings by door once a tick: each sensor scanning the fleet's crossings cost traffic sensors × crossings.
      const byDoor = groupBy(step.crossings, (c) => c.doorId);
      for (const a of traffic) {
        for (const c of byDoor.get(a.s.doorId as string) ?? []) a.pendingTruth[(c.direction === 'in') === a.sameSense ? 0 : 1]++;
        const elapsed = step.atMs - model.startMs;
        if (elapsed > 0 && elapsed % a.s.reportIntervalMs === 0) {
          let list = trueCounts.get(a.s.id);
          if (!list) trueCounts.set(a.s.id, (list = []));
          list.push([a.pendingTruth[0], a.pendingTruth[1]]);
          a.pendingTruth = [0, 0];
        }
      }
      inner.observe(step, world);
    },
    async drain() {
      const packets = await inner.drain();
      const d = packets.data;
      for (let at = 0; at < d.length; at = nextEdgePacket(d, at)) {
        const a = accOf[d[at] as number];
        if (!a) continue;
        const n = d[at + 2] as number;
        if (n >= 0 && 'view' in a) scorePresence(a, truth, d[at + 1] as number, d, at + 3, n);
        else if (n < 0 && 'sameSense' in a) scoreTraffic(a, trueCounts.get(a.s.id)?.shift() ?? [0, 0], [d[at + 4] as number, d[at + 5] as number]);
      }
      // A drain hands over the packets of every instant observed before it (EdgeStage), so
      // what it did not score no later drain could: the interval's truth is forgotten here.
      truth.clear();
      return packets;
    },
    close: () => inner.close(),
    accuracy: () => summarise(presence, traffic),
  };
}

function observePresence(list: PresenceAcc[], truth: PresenceTruth, startMs: number, atMs: number, world: World, inView: InView): void {
  // A floor's people grouped by room once per instant (in the floor's order, so the truth is
  // the same): each sensor scanning its whole floor cost sensors × people per floor.
  const byFloor = new Map<string, Map<string | null, PersonState[]>>();
  const NONE: readonly PersonState[] = [];
  for (const a of list) {
    if ((atMs - startMs) % a.s.reportIntervalMs !== 0) continue;
    let rooms = byFloor.get(a.s.floorId);
    if (!rooms) byFloor.set(a.s.floorId, (rooms = groupBy(world.peopleOnFloor(a.s.floorId), (p) => p.roomId)));
    truth.begin(a.i, atMs);
    for (const p of rooms.get(a.s.roomId) ?? NONE) if (inView(a.s, a.view, p)) truth.add(p.x, p.y);
    truth.end();
  }
}

/** Scores one report: its `n` detections are `data[from … from + 2n)` (x, y each, sensor-local). */
function scorePresence(a: PresenceAcc, truths: PresenceTruth, atMs: number, data: Float64Array, from: number, n: number): void {
  const e = truths.take(a.i, atMs);
  if (e < 0) return;
  const truth = truths.positions;
  const at = truths.startOf(e);
  const nTrue = truths.countOf(e) / 2;
  a.samples++;
  const err = Math.abs(n - nTrue);
  a.absErr += err;
  if (err === 0) a.exact++;
  // Nothing to match (most reports: an empty footprint): no per-report arrays or sets.
  if (n === 0 || nTrue === 0) return;
  // Greedy nearest matching, closest pairs first.
  const det: Array<readonly [number, number]> = [];
  for (let k = 0; k < n; k++) det.push(a.view.toWorld(data[from + 2 * k] as number, data[from + 2 * k + 1] as number));
  const pairs: Array<[number, number, number]> = [];
  det.forEach(([x, y], d) => {
    for (let t = 0; t < nTrue; t++) pairs.push([Math.hypot(x - (truth[at + 2 * t] as number), y - (truth[at + 2 * t + 1] as number)), d, t]);
  });
  pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1] || p[2] - q[2]);
  const usedD = new Set<number>();
  const usedT = new Set<number>();
  for (const [dist, d, t] of pairs) {
    if (dist > MATCH_M) break;
    if (usedD.has(d) || usedT.has(t)) continue;
    usedD.add(d);
    usedT.add(t);
    a.locSum += dist;
    a.locN++;
  }
}

/** Matches counts with one interval of tolerance either way (see the module comment). */
function scoreTraffic(a: TrafficAcc, truth: [number, number], meas: [number, number]): void {
  for (const k of [0, 1] as const) {
    let t = truth[k];
    let m = meas[k];
    a.trueTotal += t;
    a.measTotal += m;
    const m1 = Math.min(m, a.pendingTrue[k]);
    m -= m1;
    const m2 = Math.min(a.pendingMeas[k], t);
    t -= m2;
    const m3 = Math.min(m, t);
    a.matched += m1 + m2 + m3;
    a.pendingTrue[k] = t - m3;
    a.pendingMeas[k] = m - m3;
  }
}

function summarise(presence: PresenceAcc[], traffic: TrafficAcc[]): DetectorAccuracy {
  const ratio = (x: number, n: number, empty = 1): number => (n === 0 ? empty : round(x / n));
  const p = presence.map((a) => ({
    id: a.s.id,
    name: a.s.name,
    model: a.s.model,
    height: a.s.height,
    samples: a.samples,
    exactRate: ratio(a.exact, a.samples),
    mae: ratio(a.absErr, a.samples, 0),
    locErrorM: ratio(a.locSum, a.locN, 0),
  }));
  const t = traffic.map((a) => ({
    id: a.s.id,
    name: a.s.name,
    model: a.s.model,
    trueCrossings: a.trueTotal,
    counted: a.measTotal,
    precision: ratio(a.matched, a.measTotal),
    recall: ratio(a.matched, a.trueTotal),
  }));
  const sum = (f: (a: PresenceAcc) => number): number => presence.reduce((x, a) => x + f(a), 0);
  const samples = sum((a) => a.samples);
  const trueCrossings = traffic.reduce((x, a) => x + a.trueTotal, 0);
  const counted = traffic.reduce((x, a) => x + a.measTotal, 0);
  const matched = traffic.reduce((x, a) => x + a.matched, 0);
  return {
    presence: { sensors: p, overall: { samples, exactRate: ratio(sum((a) => a.exact), samples), mae: ratio(sum((a) => a.absErr), samples, 0), locErrorM: ratio(sum((a) => a.locSum), sum((a) => a.locN), 0) } },
    traffic: { sensors: t, overall: { trueCrossings, counted, precision: ratio(matched, counted), recall: ratio(matched, trueCrossings) } },
  };
}
