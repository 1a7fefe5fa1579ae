import { round } from '../core/stats.js';
import { isoUtc } from '../core/time.js';
import { ValueCounts } from '../core/value-counts.js';

/**
 * Real-time capacity of a paced run (`--speed F`): how far the simulation falls behind the
 * wall clock, and how long sensed data takes to be stored, in wall milliseconds. Wall time
 * only ever reaches the report's `perf` (never `result`), so a run stays deterministic.
 *
 * - lag: at each tick, how late the loop starts it against the wall instant it was due
 *   (0 while the run keeps up);
 * - sensing → stored: when a delivery's acks are in (the cloud has stored its batches), the
 *   wall time since each of its sensing instants was due.
 *
 * Values are kept as whole-millisecond counts: exact percentiles, memory bounded by the
 * distinct values, not by the run's length.
 */
export interface RealTimeSummary {
  speed: number;
  /** Wall ms the loop started a tick after it was due: p50 / p99 / max over every tick. */
  lagMs: { p50: number; p99: number; max: number };
  /** Wall ms from a sensing instant being due to its batches being stored (acked): p50 / p99 / max. */
  sensingToStoredMs: { p50: number; p99: number; max: number };
  /** Wall ms the loop waited, at each delivery, for the previous one (acks and `advanceTo`): p50 / p99 / max. */
  deliveryWaitMs: { p50: number; p99: number; max: number };
  /** Ticks started more than `behindThresholdMs` late. */
  ticksBehind: number;
  behindThresholdMs: number;
  /** Warnings written while the run was behind (rate-limited). */
  warnings: number;
}

/** A tick this late (wall ms) counts as behind: beyond the hive's batching, a run no longer delivers "live" data. */
const DEFAULT_BEHIND_MS = 2_000;
/** At most one warning per this many wall ms while the run stays behind. */
const WARN_EVERY_MS = 10_000;

export class LagMonitor {
  readonly #speed: number;
  readonly #behindMs: number;
  readonly #lag = new ValueCounts();
  readonly #stored = new ValueCounts();
  readonly #waited = new ValueCounts();
  #ticksBehind = 0;
  #warnings = 0;
  #lastWarnWallMs = -Infinity;

  constructor(speed: number, behindMs = DEFAULT_BEHIND_MS) {
    this.#speed = speed;
    this.#behindMs = behindMs;
  }

  /**
   * One tick (sim instant `simMs`) started `lagMs` wall ms after it was due. Returns a warning
   * to print when the run is behind and none was returned in the last 10 s of wall time (the
   * wall instant of a tick is when it was due plus its lag).
   */
  tick(lagMs: number, simMs: number): string | null {
    const wallMs = simMs / this.#speed + lagMs;
    this.#lag.add(Math.round(Math.max(0, lagMs)));
    if (lagMs <= this.#behindMs) return null;
    this.#ticksBehind++;
    if (wallMs - this.#lastWarnWallMs < WARN_EVERY_MS) return null;
    this.#lastWarnWallMs = wallMs;
    this.#warnings++;
    return `occusim: behind real time (×${this.#speed}) by ${(lagMs / 1000).toFixed(1)} s at sim ${isoUtc(simMs)}: the machine cannot simulate this fleet at this speed`;
  }

  /** A delivery's batches were stored: `ageMs` is the wall time since one of its sensing instants was due. */
  stored(ageMs: number): void {
    this.#stored.add(Math.round(Math.max(0, ageMs)));
  }

  /** At a delivery the loop waited `ms` for the previous one to be stored and the platform to move on. */
  waited(ms: number): void {
    this.#waited.add(Math.round(Math.max(0, ms)));
  }

  summary(): RealTimeSummary {
    const pct = (v: ValueCounts): RealTimeSummary['lagMs'] => ({
      p50: round(v.percentile(50) || 0, 0),
      p99: round(v.percentile(99) || 0, 0),
      max: round(v.percentile(100) || 0, 0),
    });
    return {
      speed: this.#speed,
      lagMs: pct(this.#lag),
      sensingToStoredMs: pct(this.#stored),
      deliveryWaitMs: pct(this.#waited),
      ticksBehind: this.#ticksBehind,
      behindThresholdMs: this.#behindMs,
      warnings: this.#warnings,
    };
  }
}

/** One summary line for a paced run (the CLI's summary prints it; null at `--speed max`). */
export function formatRealTime(r: RealTimeSummary | undefined): string | null {
  if (!r) return null;
  const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const verdict =
    r.ticksBehind === 0 ? 'held real time' : `fell behind on ${r.ticksBehind} ticks (> ${s(r.behindThresholdMs)})`;
  return `real time ×${r.speed}: ${verdict}; lag p50 ${s(r.lagMs.p50)}, p99 ${s(r.lagMs.p99)}, max ${s(r.lagMs.max)}; sensing → stored p50 ${s(r.sensingToStoredMs.p50)}, p99 ${s(r.sensingToStoredMs.p99)}, max ${s(r.sensingToStoredMs.max)}; waited for the previous delivery p99 ${s(r.deliveryWaitMs.p99)}, max ${s(r.deliveryWaitMs.max)}`;
}
