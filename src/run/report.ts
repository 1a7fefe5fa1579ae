import type { ReportSource } from './report-source.js';
import type { DeliveryReport } from '../hive/ledger.js';
import type { DetectorAccuracy } from '../edge/accuracy.js';
import { round } from '../core/stats.js';
import { isoLocal, isoUtc } from '../core/time.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { TruthRecorder } from '../sim/truth.js';
import type { FaultCounts, StormCounts } from '../platform/reads.js';
import type { LoopStats } from './loop.js';
import { zoneOfSpace } from '../cloud/assets.js';
import { trafficOccupancyAccuracy, type TrafficOccupancyResult } from './traffic-occupancy-report.js';

/**
 * The deterministic `result` section of a run report: what the platform measured against
 * the ground truth. Every number is rounded so the JSON is byte-identical across machines.
 */
export interface SpaceAccuracy {
  id: string;
  name: string;
  /** Name of the floor the space is on (the floor itself for a floor). */
  floor: string;
  kind: 'room' | 'zone' | 'floor';
  /** Minutes where both a measured and a true value exist. */
  minutes: number;
  /** True minutes with no measured value (no sensor sample reached the cloud). */
  missingMinutes: number;
  /** Mean absolute error, people, per minute. */
  mae: number;
  /** Share of minutes where measured equals truth exactly. */
  exactRate: number;
  /** Share of minutes within one person of truth. */
  withinOneRate: number;
  meanTrue: number;
  meanMeasured: number;
}

export interface TrafficAccuracy {
  id: string;
  name: string;
  floor: string;
  door: string;
  measured: { in: number; out: number };
  truth: { in: number; out: number };
  /** Counted share of true crossings (count-based: min(measured, true) / true). */
  recall: { in: number; out: number };
}

export interface RunResult {
  scenario: {
    name: string;
    seed: number;
    fidelity: string;
    start: string;
    startLocal: string;
    durationMs: number;
    sensors: number;
    hives: number;
    people: number;
  };
  presence: {
    spaces: SpaceAccuracy[];
    /** Over every room-minute of rooms with presence sensors. */
    rooms: { minutes: number; mae: number; exactRate: number; withinOneRate: number };
  };
  traffic: { sensors: TrafficAccuracy[]; overall: { trueCrossings: number; counted: number; recall: number } };
  /** Traffic-based occupancy (raw and calibrated) vs true occupancy, daily resets, end-of-day drift. */
  trafficOccupancy: TrafficOccupancyResult;
  /** The recompute window (spec §6): events emitted, late packets revising it or landing beyond it. */
  pipeline: { eventsEmitted: number; lateInWindow: number; lateBeyondWindow: number };
  messages: {
    packetsSent: number;
    batchesSent: number;
    batchesProcessed: number;
    duplicateBatches: number;
    packetsDelivered: number;
    deadLettered: number;
    lost: number;
  };
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Delivery ledger: mesh, hives, retransmissions, losses, hops, battery (src/hive/ledger.ts). */
  delivery?: DeliveryReport;
  /** The sensors' own detection accuracy against truth, per sensor and overall (docs/edge.md). */
  detector?: DetectorAccuracy;
  /** Webhook deliveries per subscription (docs/webhooks.md): deterministic counts. */
  webhooks?: Array<{
    id: string;
    name: string;
    delivered: number;
    retried: number;
    deadLettered: number;
    disabled: number;
    pending: number;
    /** Delivery faults applied on purpose, per kind (webhooks/faults.ts). */ faults?: FaultCounts;
    /** Storm mode: its rate, the events it enqueued and those delivered (webhooks/storm.ts). */ storm?: StormCounts;
  }>;
}

export function buildResult(
  model: ScenarioModel,
  truth: TruthRecorder,
  cloud: ReportSource,
  loop: LoopStats,
  detector?: DetectorAccuracy,
): RunResult {
  const spaces = presenceAccuracy(model, truth, cloud);
  const roomSpaces = spaces.filter((s) => s.kind === 'room');
  const traffic = trafficAccuracy(model, truth, cloud);
  const counters = cloud.counters();
  const latencies = cloud.latenciesMs();
  const trueCrossings = traffic.reduce((a, s) => a + s.truth.in + s.truth.out, 0);
  const counted = traffic.reduce(
    (a, s) => a + Math.min(s.measured.in, s.truth.in) + Math.min(s.measured.out, s.truth.out),
    0,
  );
  return {
    scenario: {
      name: model.name,
      seed: model.seed,
      fidelity: model.fidelity,
      start: isoUtc(model.startMs),
      startLocal: isoLocal(model.startMs, model.sites[0]?.timezone ?? 'UTC'),
      durationMs: model.durationMs,
      sensors: model.sensors.length,
      hives: model.hives.length,
      people: model.populations.reduce((a, p) => a + p.count, 0),
    },
    presence: { spaces, rooms: pooled(roomSpaces) },
    traffic: { sensors: traffic, overall: { trueCrossings, counted, recall: ratio(counted, trueCrossings) } },
    trafficOccupancy: trafficOccupancyAccuracy(model, truth, cloud, zoneOfSpace(model)),
    pipeline: {
      eventsEmitted: counters.eventsEmitted,
      lateInWindow: counters.lateInWindow,
      lateBeyondWindow: counters.lateBeyondWindow,
    },
    messages: {
      packetsSent: loop.packetsSent,
      batchesSent: loop.batchesSent,
      batchesProcessed: counters.batchesProcessed,
      duplicateBatches: counters.duplicateBatches,
      packetsDelivered: counters.packetsProcessed + counters.packetsStoredBefore,
      deadLettered: counters.deadLettered,
      lost: loop.packetsSent - counters.packetsProcessed - counters.packetsStoredBefore - counters.deadLettered,
    },
    latencyMs: {
      p50: round(latencies.percentile(50) || 0, 1),
      p90: round(latencies.percentile(90) || 0, 1),
      p99: round(latencies.percentile(99) || 0, 1),
      max: round(latencies.percentile(100) || 0, 1),
    },
    ...(detector ? { detector } : {}),
  };
}

function ratio(a: number, b: number): number {
  return b === 0 ? 1 : round(a / b);
}

function presenceAccuracy(model: ScenarioModel, truth: TruthRecorder, cloud: ReportSource): SpaceAccuracy[] {
  // Floor by floor: the floor, then its rooms, then its zones.
  const spaces = model.floors.flatMap((f) => [
    { id: f.id, name: f.name, floor: f.name, kind: 'floor' as const },
    ...model.rooms
      .filter((r) => r.floorId === f.id)
      .map((r) => ({ id: r.id, name: r.name, floor: f.name, kind: 'room' as const })),
    ...model.zones
      .filter((z) => z.floorId === f.id)
      .map((z) => ({ id: z.id, name: z.name, floor: f.name, kind: 'zone' as const })),
  ]);
  const out: SpaceAccuracy[] = [];
  for (const space of spaces) {
    const measured = cloud.presenceMinutes(space.id);
    if (measured.length === 0) continue; // no presence coverage: nothing to compare
    const byMinute = new Map(measured.map((m) => [m.minuteMs, m.value]));
    let minutes = 0;
    let missing = 0;
    let absErr = 0;
    let exact = 0;
    let withinOne = 0;
    let sumTrue = 0;
    let sumMeasured = 0;
    for (const [minuteMs, trueValue] of truth.minuteSeries(space.id)) {
      const m = byMinute.get(minuteMs);
      if (m === undefined) {
        missing++;
        continue;
      }
      const err = Math.abs(m - trueValue);
      minutes++;
      absErr += err;
      if (err === 0) exact++;
      if (err <= 1) withinOne++;
      sumTrue += trueValue;
      sumMeasured += m;
    }
    out.push({
      ...space,
      minutes,
      missingMinutes: missing,
      mae: minutes ? round(absErr / minutes) : 0,
      exactRate: ratio(exact, minutes),
      withinOneRate: ratio(withinOne, minutes),
      meanTrue: minutes ? round(sumTrue / minutes) : 0,
      meanMeasured: minutes ? round(sumMeasured / minutes) : 0,
    });
  }
  return out;
}

function pooled(spaces: readonly SpaceAccuracy[]): RunResult['presence']['rooms'] {
  const minutes = spaces.reduce((a, s) => a + s.minutes, 0);
  const weighted = (f: (s: SpaceAccuracy) => number): number =>
    minutes === 0 ? 0 : round(spaces.reduce((a, s) => a + f(s) * s.minutes, 0) / minutes);
  return {
    minutes,
    mae: weighted((s) => s.mae),
    exactRate: weighted((s) => s.exactRate),
    withinOneRate: weighted((s) => s.withinOneRate),
  };
}

function trafficAccuracy(model: ScenarioModel, truth: TruthRecorder, cloud: ReportSource): TrafficAccuracy[] {
  const doors = new Map(model.doors.map((d) => [d.id, d]));
  const floorNames = new Map(model.floors.map((f) => [f.id, f.name]));
  const out: TrafficAccuracy[] = [];
  for (const s of model.sensors) {
    if (s.mode !== 'traffic' || s.doorId === null) continue;
    const door = doors.get(s.doorId);
    if (!door) continue;
    const sameSense = s.roomId === door.toRoomId;
    const trueCounts = { in: 0, out: 0 };
    for (const c of truth.crossings(door.id)) {
      if ((c.direction === 'in') === sameSense) trueCounts.in++;
      else trueCounts.out++;
    }
    const measured = { in: 0, out: 0 };
    for (const m of cloud.trafficMinutes(s.id)) {
      measured.in += m.in;
      measured.out += m.out;
    }
    out.push({
      id: s.id,
      name: s.name,
      floor: floorNames.get(s.floorId) ?? '',
      door: door.name,
      measured,
      truth: trueCounts,
      recall: {
        in: ratio(Math.min(measured.in, trueCounts.in), trueCounts.in),
        out: ratio(Math.min(measured.out, trueCounts.out), trueCounts.out),
      },
    });
  }
  return out;
}
