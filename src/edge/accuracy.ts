import { footprintTransform, type FootprintTransform } from '../core/footprint.js';
import { groupBy } from '../core/group-by.js';
import { round } from '../core/stats.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import type { PersonState, World, WorldStep } from '../sim/types.js';
import { PresenceTruth } from './accuracy-truth.js';
import { nextEdgePacket } from './edge-packets.js';
import { GreedyMatcher } from './greedy-match.js';
import { RoomPeople } from './room-people.js';
import type { EdgeStage } from './stage.js';

/**
 * Detection accuracy of the edge against ground truth, per sensor and overall, the same way
 * at both fidelities: at each presence report instant the true people in the sensor's room
 * and footprint are compared with its detections (count, and position after local→world
 * mapping); each traffic interval's counts are matched with the true crossings of its door,
 * a crossing counted in the next interval still matching (detection lags a few frames).
 */
export type { DetectorAccuracy } from './accuracy-types.js';
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
  /** True crossings since the last report instant, [in, out] (counters, reset in place). */
  pendingTruth: [number, number];
  /**
   * True [in, out] of each report instant not scored yet, in order: `queue[head …]`, two numbers
   * an instant (a tuple per instant in a `Map` by sensor lived until the drain and was promoted).
   */
  queue: number[];
  head: number;
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
  const presence = model.sensors
    .filter((s) => s.mode === 'presence')
    .map((s, i): PresenceAcc => ({
      s,
      i,
      view: footprintTransform(s),
      samples: 0,
      exact: 0,
      absErr: 0,
      locSum: 0,
      locN: 0,
    }));
  const traffic = model.sensors
    .filter((s) => s.mode === 'traffic' && s.doorId !== null)
    .map((s): TrafficAcc => ({
      s,
      sameSense: s.roomId === doors.get(s.doorId as string)?.toRoomId,
      pendingTruth: [0, 0],
      queue: [],
      head: 0,
      pendingTrue: [0, 0],
      pendingMeas: [0, 0],
      matched: 0,
      trueTotal: 0,
      measTotal: 0,
    }));
  // The traffic sensors of each door, so a tick's crossings reach theirs without a grouping per tick.
  const trafficOfDoor = groupBy(traffic, (a) => a.s.doorId as string);
  const floors = presenceFloors(presence);
  // Per sensor index in model.sensors (the flat packets' sensor index): its figures, if scored.
  const byId = new Map<string, PresenceAcc | TrafficAcc>([
    ...presence.map((a) => [a.s.id, a] as const),
    ...traffic.map((a) => [a.s.id, a] as const),
  ]);
  const accOf = model.sensors.map((s) => byId.get(s.id));
  const truth = new PresenceTruth(presence.length);
  return {
    observe(step: WorldStep, world: World) {
      observePresence(floors, truth, model.startMs, step.atMs, world, inView);
      // Each crossing to its door's sensors: each sensor scanning the fleet's crossings cost traffic sensors × crossings.
      for (const c of step.crossings) {
        const watching = trafficOfDoor.get(c.doorId);
        if (watching) for (const a of watching) a.pendingTruth[(c.direction === 'in') === a.sameSense ? 0 : 1]++;
      }
      const elapsed = step.atMs - model.startMs;
      for (const a of traffic) {
        if (elapsed > 0 && elapsed % a.s.reportIntervalMs === 0) {
          a.queue.push(a.pendingTruth[0], a.pendingTruth[1]);
          a.pendingTruth[0] = 0;
          a.pendingTruth[1] = 0;
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
        if (n >= 0 && 'view' in a) scorePresence(a, truth, d, at);
        else if (n < 0 && 'sameSense' in a) scoreTraffic(a, d[at + 4] as number, d[at + 5] as number);
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

/** One floor's presence sensors, with the floor's people by room (reused from instant to instant) and each sensor's room slot. */
interface PresenceFloor {
  readonly floorId: string;
  readonly sensors: readonly PresenceAcc[];
  readonly slots: readonly number[];
  readonly rooms: RoomPeople;
}

function presenceFloors(presence: readonly PresenceAcc[]): PresenceFloor[] {
  return [...groupBy(presence, (a) => a.s.floorId)].map(([floorId, sensors]) => {
    const rooms = new RoomPeople(sensors.flatMap((a) => (a.s.roomId === null ? [] : [a.s.roomId])));
    return { floorId, sensors, slots: sensors.map((a) => rooms.slotOf(a.s.roomId)), rooms };
  });
}

function observePresence(
  floors: readonly PresenceFloor[],
  truth: PresenceTruth,
  startMs: number,
  atMs: number,
  world: World,
  inView: InView,
): void {
  // A floor's people grouped by room once per instant (in the floor's order, so the truth is
  // the same): each sensor scanning its whole floor cost sensors × people per floor.
  for (const f of floors) {
    let grouped = false;
    for (let k = 0; k < f.sensors.length; k++) {
      const a = f.sensors[k] as PresenceAcc;
      if ((atMs - startMs) % a.s.reportIntervalMs !== 0) continue;
      if (!grouped) {
        f.rooms.fill(world.peopleOnFloor(f.floorId));
        grouped = true;
      }
      truth.begin(a.i, atMs);
      // A sensor in no room (slot -1) sees nobody: everyone on a floor is in a room.
      const slot = f.slots[k] as number;
      if (slot >= 0) {
        const people = f.rooms.people;
        for (let j = f.rooms.start(slot), end = f.rooms.end(slot); j < end; j++) {
          const p = people[j] as PersonState;
          if (inView(a.s, a.view, p)) truth.add(p.x, p.y);
        }
      }
      truth.end();
    }
  }
}

const matcher = new GreedyMatcher(MATCH_M);

/**
 * Scores the presence report at `data[packet]`: its instant, detection count n, then n detections
 * (x, y each, sensor-local). It reads its instant itself: an epoch-ms double passed as an
 * argument is boxed into a heap number per packet.
 */
function scorePresence(a: PresenceAcc, truths: PresenceTruth, data: Float64Array, packet: number): void {
  const n = data[packet + 2] as number;
  const from = packet + 3;
  const e = truths.take(a.i, data[packet + 1] as number);
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
  // Greedy nearest matching, closest pairs first (greedy-match.ts: reused arrays, not tuples,
  // pair triples and sets per report, which were garbage per sensor and interval).
  matcher.reset(n, nTrue);
  for (let d = 0; d < n; d++) {
    const [x, y] = a.view.toWorld(data[from + 2 * d] as number, data[from + 2 * d + 1] as number);
    for (let t = 0; t < nTrue; t++)
      matcher.pair(d, t, Math.hypot(x - (truth[at + 2 * t] as number), y - (truth[at + 2 * t + 1] as number)));
  }
  a.locN += matcher.solve(a.locSum);
  a.locSum = matcher.sum;
}

/** Scores one traffic report's counts against the oldest unscored true counts of its sensor. */
function scoreTraffic(a: TrafficAcc, measIn: number, measOut: number): void {
  let trueIn = 0;
  let trueOut = 0;
  if (a.head < a.queue.length) {
    trueIn = a.queue[a.head] as number;
    trueOut = a.queue[a.head + 1] as number;
    a.head += 2;
    // All read: start over (once an interval at most, not per report).
    if (a.head === a.queue.length) {
      a.queue.length = 0;
      a.head = 0;
    }
  }
  scoreCounts(a, 0, trueIn, measIn);
  scoreCounts(a, 1, trueOut, measOut);
}

/** Matches counts with one interval of tolerance either way (see the module comment); k: 0 in, 1 out. */
function scoreCounts(a: TrafficAcc, k: 0 | 1, trueCount: number, measured: number): void {
  let t = trueCount;
  let m = measured;
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
    presence: {
      sensors: p,
      overall: {
        samples,
        exactRate: ratio(
          sum((a) => a.exact),
          samples,
        ),
        mae: ratio(
          sum((a) => a.absErr),
          samples,
          0,
        ),
        locErrorM: ratio(
          sum((a) => a.locSum),
          sum((a) => a.locN),
          0,
        ),
      },
    },
    traffic: {
      sensors: t,
      overall: { trueCrossings, counted, precision: ratio(matched, counted), recall: ratio(matched, trueCrossings) },
    },
  };
}
