import type { Cloud } from '../cloud/cloud.js';
import type { IngestTally } from '../cloud/pipeline.js';

/**
 * The run's ingest across `ingest_kill` faults (docs/scenario-format.md, "Network and faults"):
 * the ingest process now, and how its successor starts. A kill is SIGKILL's: the process's
 * broker connection is cut without a goodbye, its memory (open minutes, recompute state, late
 * budgets, queued work) is gone and nothing is flushed or finalised (`Cloud.kill`); the
 * successor starts on the same store and resumes from the state stored there, as a restarted
 * `occusim serve` or a partition lease's successor does (cloud/pipeline.ts, crash recovery).
 * Only the run's tally goes on (`IngestTally`): it is the run's accounting, not the process's.
 *
 * `cloud` is the ingest as the rest of the platform sees it: each call goes to the process
 * alive at the time.
 */
export class IngestGenerations {
  #current: Cloud;
  readonly #successor: (tally: IngestTally) => Promise<Cloud>;
  /** Kills applied so far. */
  kills = 0;
  readonly cloud: Cloud;

  constructor(first: Cloud, successor: (tally: IngestTally) => Promise<Cloud>) {
    this.#current = first;
    this.#successor = successor;
    const now = (): Cloud => this.#current;
    this.cloud = {
      advance: (t) => now().advance(t),
      finish: () => now().finish(),
      idle: () => now().idle(),
      counters: () => now().counters(),
      latenciesMs: () => now().latenciesMs(),
      presenceMinutes: (id) => now().presenceMinutes(id),
      trafficMinutes: (id) => now().trafficMinutes(id),
      deadLetters: () => now().deadLetters(),
      hiveStatus: (id) => now().hiveStatus(id),
      sensorStatus: (id) => now().sensorStatus(id),
      trafficSpaces: () => now().trafficSpaces(),
      trafficOccupancy: (id, from, to, calibrated) => now().trafficOccupancy(id, from, to, calibrated),
      eventEnvelopes: (afterId, limit) => now().eventEnvelopes(afterId, limit),
      close: () => now().close(),
      dying: () => now().dying(),
      kill: () => now().kill(),
    };
  }

  /** The batches from now on are stored and never acked by this process (`Cloud.dying`). */
  dying(): void {
    this.#current.dying();
  }

  /** The process dies and its successor takes over on the same store. */
  async kill(): Promise<void> {
    const tally = await this.#current.kill();
    this.#current = await this.#successor(tally);
    this.kills++;
  }
}
