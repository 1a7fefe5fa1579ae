import { AppError, ErrorCodes } from '../core/errors.js';
import { round } from '../core/stats.js';
import { sumLedgerCounts, type HiveLedger, type LedgerCounts } from '../hive/ledger.js';
import type { RunResult, SpaceAccuracy, TrafficAccuracy } from './report.js';
import type { RunReport } from './run-report.js';
import type { StoreAccuracy } from './store-accuracy.js';

/**
 * `occusim report merge`: the shards' reports (`--shard i/n`) as the whole run's. Only what
 * merges exactly is merged — counts are summed, per-sensor and per-hive rows are each owned by
 * one shard — and every figure that cannot be is named in `notMerged` rather than guessed.
 */
export interface MergedReport {
  scenario: string;
  seed: number;
  shards: number;
  scenarioInfo: Omit<RunResult['scenario'], 'sensors' | 'hives'> & { sensors: number; hives: number };
  /** The whole run's ledger: sent = stored + dead-lettered + lost (packets); batches with duplicates. */
  ledger: {
    packets: { sent: number; stored: number; deadLettered: number; lost: number };
    batches: { sent: number; stored: number; duplicates: number };
  };
  /** `eventsEmitted` only with `--store`: the outbox's events of the run's minutes (`withStoreAccuracy`). */
  pipeline: { lateInWindow: number; lateBeyondWindow: number; eventsEmitted?: number };
  /** Per traffic sensor (each on one shard's hive), and overall recomputed from them. */
  traffic: RunResult['traffic'];
  /** Spaces measured by one shard only (all their sensors are on its hives): exact. */
  presence: { spaces: SpaceAccuracy[]; rooms: RunResult['presence']['rooms']; splitSpaces: string[] };
  /** Traffic-based occupancy against truth, only with `--store`: it needs every counter of a space, read from the shared store. */
  trafficOccupancy?: RunResult['trafficOccupancy'];
  /** Sensing → stored latency: only the maximum merges exactly. */
  /** `max` from the shards; the percentiles from the store (`--store`, store-accuracy.ts), absent without it. */
  latencyMs: { max: number; p50?: number; p90?: number; p99?: number };
  /** Per-hive delivery rows (each hive on one shard), and their summed counts. */
  delivery: { hives: HiveLedger[]; overall: LedgerCounts } | null;
  /**
   * Where `presence` and `traffic` come from: the shards' own platforms ('shards'), or the store
   * the ingest processes shared (`report merge --store`, every space and counter of the run).
   */
  accuracyFrom: 'shards' | { store: string };
  /** Figures of the shards' reports that cannot be merged exactly, and why. */
  notMerged: string[];
}

/** Most shard reports one merge reads (a report is a few MB at most). */
export const MAX_MERGED_REPORTS = 1024;

/**
 * Each entry starts with the figure it names; `withStoreAccuracy` removes the entries the store
 * makes exact (by `NOT_MERGED_FROM_STORE`), so the rest say why even `--store` cannot.
 */
const NOT_MERGED = [
  'latencyMs p50/p90/p99: percentiles of the shards do not give the whole run’s (max is kept; exact with --store: every stored packet’s received instant, its batch’s send instant, minus its sensing instant)',
  'pipeline.eventsEmitted: a shard emits events for its own part of a space split across shards (exact with --store: the outbox’s events)',
  'trafficOccupancy: a space’s occupancy from its door counters needs every counter, which may sit on several shards (exact with --store: every counter’s stored minutes)',
  'presence of spaces measured by several shards (listed in presence.splitSpaces): each shard saw only its sensors (exact with --store)',
  'detector, webhooks and perf: per-run figures, read them per shard',
];

/** The `NOT_MERGED` entries (by the figure they start with) that a store makes exact. */
const NOT_MERGED_FROM_STORE = {
  presence: 'presence of spaces',
  trafficOccupancy: 'trafficOccupancy:',
  eventsEmitted: 'pipeline.eventsEmitted:',
} as const;
const LATENCY_NOT_MERGED = 'latencyMs p50/p90/p99:';

function refuse(message: string): never {
  throw new AppError(ErrorCodes.USAGE, `report merge: ${message}`);
}

/** `names[i]` names `reports[i]` in errors (its file). */
export function mergeReports(
  reports: readonly RunReport[],
  names: readonly string[] = reports.map((_, i) => `report ${i + 1}`),
): MergedReport {
  if (reports.length === 0) refuse('no reports given');
  if (reports.length > MAX_MERGED_REPORTS) refuse(`at most ${MAX_MERGED_REPORTS} reports, got ${reports.length}`);
  const first = reports[0] as RunReport;
  const firstShard = first.shard ?? refuse(`${names[0]} is not a shard's report (no shard: run with --shard i/n)`);
  const seen = new Map<number, string>();
  const hives = new Set<string>();
  reports.forEach((r, k) => {
    const name = names[k] ?? `report ${k + 1}`;
    const s = r.shard ?? refuse(`${name} is not a shard's report (no shard: run with --shard i/n)`);
    if (r.scenario !== first.scenario || r.seed !== first.seed)
      refuse(`${name} is of ${r.scenario} seed ${r.seed}, ${names[0]} of ${first.scenario} seed ${first.seed}`);
    const a = r.result.scenario;
    const b = first.result.scenario;
    if (a.start !== b.start || a.durationMs !== b.durationMs || a.fidelity !== b.fidelity)
      refuse(
        `${name} ran ${a.start} for ${a.durationMs} ms at ${a.fidelity}, ${names[0]} ${b.start} for ${b.durationMs} ms at ${b.fidelity}`,
      );
    if (s.count !== firstShard.count || s.totalHives !== firstShard.totalHives)
      refuse(
        `${name} is shard ${s.index}/${s.count}, ${names[0]} ${firstShard.index}/${firstShard.count}: different shard counts`,
      );
    const twin = seen.get(s.index);
    if (twin !== undefined) refuse(`${name} and ${twin} are both shard ${s.index}/${s.count}`);
    seen.set(s.index, name);
    for (const h of s.hives) {
      if (hives.has(h)) refuse(`hive ${h} is in more than one shard (${name})`);
      hives.add(h);
    }
  });
  const missing = Array.from({ length: firstShard.count }, (_, i) => i + 1).filter((i) => !seen.has(i));
  if (missing.length > 0)
    refuse(
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${firstShard.count}`).join(', ')} missing`,
    );
  if (hives.size !== firstShard.totalHives)
    refuse(`the shards hold ${hives.size} of the scenario's ${firstShard.totalHives} hives`);
  // In shard order, so the merge does not depend on the order the files were given in.
  const ordered = [...reports].sort((x, y) => (x.shard?.index ?? 0) - (y.shard?.index ?? 0));
  return merge(ordered, first);
}

function merge(reports: readonly RunReport[], first: RunReport): MergedReport {
  const sum = (f: (r: RunResult) => number): number => reports.reduce((a, r) => a + f(r.result), 0);
  const m = (r: RunResult): RunResult['messages'] => r.messages;
  const sensors = reports.flatMap((r) => r.result.traffic.sensors);
  return {
    scenario: first.scenario,
    seed: first.seed,
    shards: reports.length,
    scenarioInfo: {
      ...first.result.scenario,
      sensors: sum((r) => r.scenario.sensors),
      hives: sum((r) => r.scenario.hives),
    },
    ledger: {
      packets: {
        sent: sum((r) => m(r).packetsSent),
        stored: sum((r) => m(r).packetsDelivered),
        deadLettered: sum((r) => m(r).deadLettered),
        lost: sum((r) => m(r).lost),
      },
      batches: {
        sent: sum((r) => m(r).batchesSent),
        stored: sum((r) => m(r).batchesProcessed),
        duplicates: sum((r) => m(r).duplicateBatches),
      },
    },
    pipeline: {
      lateInWindow: sum((r) => r.pipeline.lateInWindow),
      lateBeyondWindow: sum((r) => r.pipeline.lateBeyondWindow),
    },
    traffic: { sensors, overall: trafficOverall(sensors) },
    presence: mergePresence(reports),
    latencyMs: { max: Math.max(...reports.map((r) => r.result.latencyMs.max)) },
    delivery: mergeDelivery(reports),
    accuracyFrom: 'shards',
    notMerged: NOT_MERGED,
  };
}

/**
 * The merge with the whole run's presence, traffic and traffic-based occupancy accuracy and its
 * emitted events, read from the shared store (store-accuracy.ts): exact for every space, split
 * across shards or not, and removed from `notMerged`; the events stay there when the store
 * could not count them all (`eventsEmitted` null). `store` names it (no password).
 */
export function withStoreAccuracy(merged: MergedReport, accuracy: StoreAccuracy, store: string): MergedReport {
  const exact: string[] = [NOT_MERGED_FROM_STORE.presence, NOT_MERGED_FROM_STORE.trafficOccupancy];
  if (accuracy.eventsEmitted !== null) exact.push(NOT_MERGED_FROM_STORE.eventsEmitted);
  if (accuracy.latencyMs !== null) exact.push(LATENCY_NOT_MERGED);
  return {
    ...merged,
    ...(accuracy.latencyMs !== null ? { latencyMs: accuracy.latencyMs } : {}),
    pipeline: {
      ...merged.pipeline,
      ...(accuracy.eventsEmitted !== null ? { eventsEmitted: accuracy.eventsEmitted } : {}),
    },
    traffic: accuracy.traffic,
    presence: { spaces: accuracy.presence.spaces, rooms: accuracy.presence.rooms, splitSpaces: [] },
    trafficOccupancy: accuracy.trafficOccupancy,
    accuracyFrom: { store },
    notMerged: merged.notMerged.filter((n) => !exact.some((prefix) => n.startsWith(prefix))),
  };
}

/** The traffic occupancy summary line, as `occusim run`'s summary puts it (src/cli/summary.ts). */
function trafficOccupancyLine(t: RunResult['trafficOccupancy']): string {
  const mean = (f: (s: RunResult['trafficOccupancy']['spaces'][number]) => number): number =>
    t.spaces.length === 0 ? 0 : round(t.spaces.reduce((a, s) => a + f(s), 0) / t.spaces.length);
  return `traffic occupancy: ${t.spaces.length} space(s), mean MAE raw ${mean((s) => s.maeRaw)}, calibrated ${mean((s) => s.maeCalibrated)}${t.endOfDayDriftReduction === null ? '' : `, end-of-day drift reduced ${t.endOfDayDriftReduction}`}`;
}

/** As report.ts computes it for one run, from the per-sensor counts. */
function trafficOverall(sensors: readonly TrafficAccuracy[]): RunResult['traffic']['overall'] {
  const trueCrossings = sensors.reduce((a, s) => a + s.truth.in + s.truth.out, 0);
  const counted = sensors.reduce(
    (a, s) => a + Math.min(s.measured.in, s.truth.in) + Math.min(s.measured.out, s.truth.out),
    0,
  );
  return { trueCrossings, counted, recall: trueCrossings === 0 ? 1 : round(counted / trueCrossings) };
}

function mergePresence(reports: readonly RunReport[]): MergedReport['presence'] {
  const owners = new Map<string, number>();
  for (const r of reports) for (const s of r.result.presence.spaces) owners.set(s.id, (owners.get(s.id) ?? 0) + 1);
  const spaces = reports.flatMap((r) => r.result.presence.spaces).filter((s) => owners.get(s.id) === 1);
  const split = [...owners]
    .filter(([, n]) => n > 1)
    .map(([id]) => id)
    .sort();
  // As report.ts pools one run's rooms: weighted by minutes.
  const rooms = spaces.filter((s) => s.kind === 'room');
  const minutes = rooms.reduce((a, s) => a + s.minutes, 0);
  const weighted = (f: (s: SpaceAccuracy) => number): number =>
    minutes === 0 ? 0 : round(rooms.reduce((a, s) => a + f(s) * s.minutes, 0) / minutes);
  return {
    spaces,
    rooms: {
      minutes,
      mae: weighted((s) => s.mae),
      exactRate: weighted((s) => s.exactRate),
      withinOneRate: weighted((s) => s.withinOneRate),
    },
    splitSpaces: split,
  };
}

function mergeDelivery(reports: readonly RunReport[]): MergedReport['delivery'] {
  if (reports.some((r) => r.result.delivery === undefined)) return null;
  const hives = reports.flatMap((r) => r.result.delivery?.hives ?? []);
  return { hives, overall: sumLedgerCounts(hives) };
}

/** The ledger and what merged, as a few lines for a terminal. */
export function formatMerged(m: MergedReport): string {
  const p = m.ledger.packets;
  const b = m.ledger.batches;
  const t = m.traffic.overall;
  return [
    `${m.scenario} seed ${m.seed}: ${m.shards} shards, ${m.scenarioInfo.hives} hives, ${m.scenarioInfo.sensors} sensors`,
    `packets: sent ${p.sent} = stored ${p.stored} + dead-lettered ${p.deadLettered} + lost ${p.lost}`,
    `batches: sent ${b.sent}, stored ${b.stored}, duplicates ${b.duplicates} (removed)`,
    `traffic: ${t.counted} of ${t.trueCrossings} true crossings counted (recall ${t.recall})`,
    `presence: ${m.presence.spaces.length} space(s) ${m.accuracyFrom === 'shards' ? 'merged' : `read from ${m.accuracyFrom.store}`}, rooms MAE ${m.presence.rooms.mae} over ${m.presence.rooms.minutes} room-minutes${m.presence.splitSpaces.length > 0 ? `; ${m.presence.splitSpaces.length} split across shards (not merged)` : ''}`,
    ...(m.trafficOccupancy ? [trafficOccupancyLine(m.trafficOccupancy)] : []),
    ...(m.pipeline.eventsEmitted !== undefined
      ? [`events: ${m.pipeline.eventsEmitted} occupancy event(s) emitted`]
      : []),
    ...(m.latencyMs.p99 !== undefined
      ? [
          `latency sensing → stored: p50 ${m.latencyMs.p50} ms, p90 ${m.latencyMs.p90} ms, p99 ${m.latencyMs.p99} ms, max ${m.latencyMs.max} ms`,
        ]
      : []),
    `not merged: ${m.notMerged.map((n) => n.split(':')[0]).join('; ')}`,
    '',
  ].join('\n');
}
