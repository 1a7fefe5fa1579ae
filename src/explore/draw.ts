import type { Rng } from '../core/rng.js';
import type { FaultFile } from '../scenario/network-schema.js';

/**
 * Drawing fault schedules for `occusim explore` (docs/explore.md): one to `maxFaults` faults
 * of the allowed kinds at whole seconds inside the run, each aimed at a hive or sensor of the
 * scenario by name, so a drawn schedule is also a valid `--faults` argument.
 */
export const EXPLORE_FAULT_KINDS = [
  'hive_outage',
  'hive_reboot',
  'sensor_offline',
  'link_degradation',
  'broker_restart',
  'duplicate_batch',
  'clock_skew',
  'sensor_death',
  'battery_drain',
  'platform_restart',
  'webhook_down',
  'store_restart',
  'ingest_kill',
] as const;
export type ExploreFaultKind = (typeof EXPLORE_FAULT_KINDS)[number];

/**
 * Faults that lose nothing by design: the hive buffers through an outage, the broker restart is
 * between batches, a duplicate is deduplicated, and a skewed hive clock only changes the batches'
 * `sent_at_ms`, which the cloud stores but neither refuses nor aggregates by (it times a batch by
 * its own clock and each packet by its sensing time, so even a skew beyond the protocol's 2 s
 * tolerance, which `occusim check` reports, loses nothing). A platform restart resumes the run
 * from its store (src/run/platform-restarts.ts), which ends where the uninterrupted run ends.
 * A webhook endpoint down delays deliveries only: nothing the platform stores depends on them.
 * A store restart and an ingest kill leave batches unacked, which the hives send again
 * (src/platform/platform-faults.ts); the killed ingest's successor resumes from the store.
 */
export const LOSS_FREE_KINDS: ReadonlySet<string> = new Set([
  'hive_outage',
  'broker_restart',
  'duplicate_batch',
  'clock_skew',
  'platform_restart',
  'webhook_down',
  'store_restart',
  'ingest_kill',
]);

export interface DrawTargets {
  hives: readonly string[];
  sensors: readonly string[];
}

export function drawSchedule(
  rng: Rng,
  targets: DrawTargets,
  durationMs: number,
  kinds: readonly ExploreFaultKind[],
  maxFaults = 3,
): FaultFile[] {
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
    // A restart at the very start has nothing to restart (refused): one second in at the earliest.
    else if (kind === 'platform_restart' || kind === 'ingest_kill') out.push({ kind, at: `${Math.max(1, atS)}s` });
    // Up to the longest store_restart (5 minutes, the look-back).
    else if (kind === 'store_restart')
      out.push({
        kind,
        at: `${Math.max(1, atS)}s`,
        duration: `${rng.int(1, Math.max(1, Math.min(300, Math.floor(seconds / 3))))}s`,
      });
    else if (kind === 'hive_outage' || kind === 'hive_reboot' || kind === 'duplicate_batch')
      out.push({ kind, at, duration, hive: rng.pick(targets.hives) });
    else if (kind === 'clock_skew') {
      // Within two minutes either way, never 0: both sides of the protocol's 2 s tolerance.
      const offsetS = rng.int(1, 120) * (rng.int(0, 1) === 0 ? -1 : 1);
      out.push({ kind, at, duration, hive: rng.pick(targets.hives), offset: `${offsetS > 0 ? '+' : ''}${offsetS}s` });
    } else if (kind === 'sensor_death') out.push({ kind, at, sensors: [rng.pick(targets.sensors)] });
    else if (kind === 'webhook_down') out.push({ kind, at, duration });
    else if (kind === 'sensor_offline' || kind === 'battery_drain')
      out.push({ kind, at, duration, sensors: [rng.pick(targets.sensors)] });
    else out.push({ kind, at, duration, hive: rng.pick(targets.hives), loss: rng.int(1, 9) / 10 });
  }
  return out;
}
