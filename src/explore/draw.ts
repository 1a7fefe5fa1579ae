import type { Rng } from '../core/rng.js';
import type { FaultFile } from '../scenario/network-schema.js';

/**
 * Drawing fault schedules for `occusim explore` (docs/explore.md): one to `maxFaults` faults
 * of the allowed kinds at whole seconds inside the run, each aimed at a hive or sensor of the
 * scenario by name, so a drawn schedule is also a valid `--faults` argument.
 */
export const EXPLORE_FAULT_KINDS = ['hive_outage', 'hive_reboot', 'sensor_offline', 'link_degradation', 'broker_restart', 'duplicate_batch'] as const;
export type ExploreFaultKind = (typeof EXPLORE_FAULT_KINDS)[number];

/** Faults that lose nothing by design: the hive buffers through an outage, the broker restart is between batches, a duplicate is deduplicated. */
export const LOSS_FREE_KINDS: ReadonlySet<string> = new Set(['hive_outage', 'broker_restart', 'duplicate_batch']);

export interface DrawTargets {
  hives: readonly string[];
  sensors: readonly string[];
}

export function drawSchedule(rng: Rng, targets: DrawTargets, durationMs: number, kinds: readonly ExploreFaultKind[], maxFaults = 3): FaultFile[] {
  const count = rng.int(1, maxFaults);
  const seconds = Math.max(1, Math.floor(durationMs / 1000));
  const out: FaultFile[] = [];
  for (let i = 0; i < count; i++) {
    const kind = rng.pick(kinds);
    const atS = rng.int(0, seconds - 1);
    const at = `${atS}s`;
    // Up to a third of the run: long enough to span retransmissions, short enough to end inside it.
    const duration = `${rng.int(1, Math.max(1, Math.floor(seconds / 3)))}s`;
    if (kind === 'broker_restart') out.push({ kind, at });
    else if (kind === 'hive_outage' || kind === 'hive_reboot' || kind === 'duplicate_batch') out.push({ kind, at, duration, hive: rng.pick(targets.hives) });
    else if (kind === 'sensor_offline') out.push({ kind, at, duration, sensors: [rng.pick(targets.sensors)] });
    else out.push({ kind, at, duration, hive: rng.pick(targets.hives), loss: rng.int(1, 9) / 10 });
  }
  return out;
}
