import { evaluateExpectations, formatMetricValue } from '../run/expectations.js';
import type { RunResult } from '../run/report.js';
import type { Expectation } from '../scenario/expectations.js';
import type { FaultFile } from '../scenario/network-schema.js';
import { LOSS_FREE_KINDS } from './draw.js';

/**
 * The invariants `occusim explore` checks after each run (docs/explore.md). Each returns the
 * violations it finds as sentences; none means the run holds.
 */
export type Invariant = (run: RunResult, faults: readonly FaultFile[], baseline: RunResult) => string[];

/**
 * The ledger balances: every packet not stored is explained by a counter of the delivery
 * ledger (mesh drops, queue or buffer overflow, still undelivered at the end). A fault may
 * lose data by design (a rebooting hive's sensors overflow their queues); losing it silently
 * never is.
 */
export const ledgerBalanced: Invariant = (run) => {
  const o = run.delivery?.overall;
  const explained = o === undefined ? 0 : o.meshDropped + o.meshQueueOverflow + o.bufferOverflow + o.undelivered;
  return run.messages.lost === explained
    ? []
    : [`ledger: ${run.messages.lost} packet(s) lost, ${explained} explained by the delivery ledger`];
};

/** A batch the cloud took twice is counted once: processed batches never exceed those sent. */
export const noBatchCountedTwice: Invariant = (run) =>
  run.messages.batchesProcessed <= run.messages.batchesSent
    ? []
    : [
        `ledger: ${run.messages.batchesProcessed} batches processed of ${run.messages.batchesSent} sent (a batch counted twice)`,
      ];

/**
 * For schedules of loss-free faults only, what the platform stored equals the fault-free run:
 * every space's measured occupancy and every door's counts (late data revises, never drops).
 */
export const lossFreeEqualsBaseline: Invariant = (run, faults, baseline) => {
  if (!faults.every((f) => LOSS_FREE_KINDS.has(f.kind))) return [];
  const out: string[] = [];
  const base = new Map(baseline.presence.spaces.map((s) => [s.id, s]));
  for (const s of run.presence.spaces) {
    const b = base.get(s.id);
    if (b && (b.meanMeasured !== s.meanMeasured || b.missingMinutes !== s.missingMinutes))
      out.push(
        `stored: ${s.name} measured mean ${s.meanMeasured} (${s.missingMinutes} minutes missing), fault-free ${b.meanMeasured} (${b.missingMinutes})`,
      );
  }
  const doors = new Map(baseline.traffic.sensors.map((t) => [t.id, t]));
  for (const t of run.traffic.sensors) {
    const b = doors.get(t.id);
    if (b && (b.measured.in !== t.measured.in || b.measured.out !== t.measured.out))
      out.push(
        `stored: ${t.name} counted in ${t.measured.in} out ${t.measured.out}, fault-free in ${b.measured.in} out ${b.measured.out}`,
      );
  }
  if (run.messages.packetsDelivered !== baseline.messages.packetsDelivered)
    out.push(
      `stored: ${run.messages.packetsDelivered} packets delivered, fault-free ${baseline.messages.packetsDelivered}`,
    );
  return out;
};

/** An invariant with the name its violations are reported under. */
export interface NamedInvariant {
  name: string;
  check: Invariant;
}

export const DEFAULT_INVARIANTS: readonly NamedInvariant[] = [
  { name: 'ledger-balanced', check: ledgerBalanced },
  { name: 'no-double-count', check: noBatchCountedTwice },
  { name: 'loss-free-equals-baseline', check: lossFreeEqualsBaseline },
];

/**
 * `--expect` thresholds as an invariant (the syntax of `occusim run --expect`): each run, faults
 * and all, must hold them; a metric the run did not measure fails, as it does for `run`.
 */
export function thresholdsInvariant(expectations: readonly Expectation[]): NamedInvariant {
  return {
    name: 'expect',
    check: (run) =>
      evaluateExpectations(expectations, run)
        .filter((v) => !v.passed)
        .map((v) => `${v.expectation.text}: measured ${formatMetricValue(v.expectation.metric, v.measured)}`),
  };
}
