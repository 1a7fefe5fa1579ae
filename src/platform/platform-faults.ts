import type { IngestGenerations } from './ingest-kills.js';
import type { RestartableStore } from './store-restarts.js';

/**
 * The faults a run's schedule sets on the platform itself, on the platform's clock
 * (docs/scenario-format.md, "Network and faults"): `store_restart` windows and `ingest_kill`
 * instants. Plain data, so they cross into a platform thread as they are.
 */
export interface PlatformFaultTimes {
  /** The store is away over [fromMs, toMs). */
  storeAway: ReadonlyArray<{ fromMs: number; toMs: number }>;
  /** The ingest is killed at these instants. */
  ingestKills: readonly number[];
}

/** What the run's report counts of them (`DeliveryReport`, next to broker restarts). */
export interface PlatformFaultCounts {
  storeRestarts: number;
  ingestKills: number;
}

/**
 * Applies them as the driven clock moves, so that the same schedule hits the same batches in
 * every run. The driver moves the clock to each flush instant before the hives publish
 * (`reached`) and calls `advanceTo` after their acks, so between two flushes nothing is in
 * flight: a fault is applied there, never under a batch.
 *
 * - `store_restart@T+D`: the store goes away at the first instant reached at or after T (before
 *   that flush's batches) and comes back at the first at or after T + D: a flush inside the
 *   window finds it away (restartable-store.ts, the pipeline's answers), one outside finds it
 *   restarted. Before the run finishes it is back, whatever the window.
 * - `ingest_kill@T`: the kill falls in the first flush at or after T. That flush's batches reach
 *   the doomed process, which stores them and dies before acking any (`Cloud.dying`): it is killed
 *   once the flush is over, before it finalises anything (`IngestGenerations.kill`). The hives keep
 *   those batches until the successor's (cumulative) ack covers them, or send them again after
 *   their ack timeout, and the successor counts them as duplicates. A kill
 *   due while the store is away waits until it is back (the successor must read its state).
 */
export class PlatformFaults {
  readonly #away: Array<{ fromMs: number; toMs: number }>;
  readonly #kills: number[];
  readonly #store: RestartableStore;
  readonly #ingest: IngestGenerations;
  #nextWindow = 0;
  #nextKill = 0;
  /** The instant the dying process took its last flush, or null. */
  #dyingAt: number | null = null;
  #storeRestarts = 0;

  constructor(times: PlatformFaultTimes, store: RestartableStore, ingest: IngestGenerations) {
    this.#away = mergedWindows(times.storeAway);
    this.#kills = [...times.ingestKills].sort((a, b) => a - b);
    this.#store = store;
    this.#ingest = ingest;
  }

  counts(): PlatformFaultCounts {
    return { storeRestarts: this.#storeRestarts, ingestKills: this.#ingest.kills };
  }

  /** The platform's clock reads `t`, before anything it receives at `t`. */
  async reached(t: number): Promise<void> {
    await this.#storeAt(t);
    if (this.#dyingAt !== null && t > this.#dyingAt) await this.#kill();
    if (this.#nextKill < this.#kills.length && (this.#kills[this.#nextKill] as number) <= t) {
      while (this.#nextKill < this.#kills.length && (this.#kills[this.#nextKill] as number) <= t) this.#nextKill++;
      // Two kills before one flush are one: the second has no process of its own to kill.
      if (this.#dyingAt === null) {
        this.#ingest.dying();
        this.#dyingAt = t;
      }
    }
  }

  /** Before the platform finalises minutes (`advanceTo`): a doomed process dies first. */
  async beforeAdvance(): Promise<void> {
    if (this.#dyingAt !== null) await this.#kill();
  }

  /** Before the run's end (`finish`, `stoppedAt`): the store is back and the doomed process dead. */
  async beforeEnd(): Promise<void> {
    for (; this.#nextWindow < this.#away.length; this.#nextWindow++)
      if (!this.#store.available) await this.#store.comeBack();
    await this.beforeAdvance();
  }

  async #kill(): Promise<void> {
    if (!this.#store.available) return;
    this.#dyingAt = null;
    await this.#ingest.kill();
  }

  /** The store's windows up to `t`: each reached is a restart (away, then back at its end). */
  async #storeAt(t: number): Promise<void> {
    while (this.#nextWindow < this.#away.length) {
      const w = this.#away[this.#nextWindow] as { fromMs: number; toMs: number };
      if (t < w.fromMs) return;
      if (this.#store.available) {
        this.#storeRestarts++;
        await this.#store.goAway();
      }
      if (t < w.toMs) return;
      await this.#store.comeBack();
      this.#nextWindow++;
    }
  }
}

/** Overlapping windows are one outage: the store cannot go away twice at once. */
function mergedWindows(
  windows: ReadonlyArray<{ fromMs: number; toMs: number }>,
): Array<{ fromMs: number; toMs: number }> {
  const out: Array<{ fromMs: number; toMs: number }> = [];
  for (const w of [...windows].sort((a, b) => a.fromMs - b.fromMs)) {
    const last = out.at(-1);
    if (last && w.fromMs <= last.toMs) last.toMs = Math.max(last.toMs, w.toMs);
    else out.push({ ...w });
  }
  return out;
}
