import { ValueCounts } from '../core/value-counts.js';
import { batterySummary, sumLedgers, type DeliveryReport, type HiveLedger } from './ledger.js';

/**
 * A hive's part of the delivery report as plain data, so hives simulated in other threads
 * report like those of this one: the whole run's report is computed from these parts in
 * scenario order, by one function, whichever thread simulated each hive.
 */
export interface RigReport {
  ledger: HiveLedger;
  latencies: { values: Float64Array; counts: Float64Array };
  mesh: { sent: number; delivered: number; attempts: number; rejoins: number; duplicates: number };
  /** Each battery of the hive's mesh, read at the report's instant, in the mesh's order. */
  batteries: Array<{ wired: boolean; level: number; runtimeS: number; changeByMs: number | null }>;
}

export interface HiveGroupReport {
  hives: RigReport[];
  /** Hops → data packets that reached their hive over that many hops. */
  hops: Array<[number, number]>;
}

/** The run's delivery report from its groups' parts; `hiveOrder` puts the hives in scenario order (the floating sums depend on it). */
export function combineDeliveryReports(
  groups: readonly HiveGroupReport[],
  hiveOrder: ReadonlyMap<string, number>,
): DeliveryReport {
  const rigs = groups
    .flatMap((g) => g.hives)
    .sort((a, b) => (hiveOrder.get(a.ledger.hive) ?? 0) - (hiveOrder.get(b.ledger.hive) ?? 0));
  const hops = new Map<number, number>();
  for (const g of groups) for (const [k, v] of g.hops) hops.set(k, (hops.get(k) ?? 0) + v);
  const ledgers: HiveLedger[] = [];
  const all = new ValueCounts();
  let frames = 0;
  let delivered = 0;
  let attempts = 0;
  let rejoins = 0;
  let duplicates = 0;
  for (const r of rigs) {
    ledgers.push(r.ledger);
    all.addAll(ValueCounts.fromArrays(r.latencies));
    frames += r.mesh.sent;
    delivered += r.mesh.delivered;
    attempts += r.mesh.attempts;
    rejoins += r.mesh.rejoins;
    duplicates += r.mesh.duplicates;
  }
  const histogram = Object.fromEntries([...hops.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v]));
  return {
    hives: ledgers,
    overall: {
      ...sumLedgers(ledgers, all),
      meshDeliveryRatio: frames ? Math.round((delivered / frames) * 1e6) / 1e6 : 1,
      meshAttemptSuccess: attempts ? Math.round((delivered / attempts) * 1e4) / 1e4 : 1,
      meshRejoins: rejoins,
      meshDuplicates: duplicates,
    },
    hopHistogram: histogram,
    battery: batterySummary(rigs.flatMap((r) => r.batteries)),
  };
}
