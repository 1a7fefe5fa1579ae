import type { WallTime } from '../core/clock.js';
import { ValueCounts } from '../core/value-counts.js';

/**
 * How long endpoints take to answer (perf only; issue 29 item 4, what limits delivery): wall
 * time from the moment a request leaves the sender's queue for its connection (undici's
 * `onConnect`) to its answer's status line (`onHeaders`). Measured there, not from `send`: a
 * round's requests are handed to the sender together and wait their turn for one of the
 * endpoint's slots, a wait the sender's own pace sets as much as the receiver's. On a
 * pipelined connection an answer still waits behind the earlier ones: the endpoint's time.
 * Kept as value counts in tenths of a ms (loopback answers take well under one).
 */
export class AnswerTimes {
  readonly #wall: WallTime;
  readonly #tenths = new ValueCounts();

  constructor(wall: WallTime) {
    this.#wall = wall;
  }

  /** The instant a request was written (handed back to `answered`). */
  start(): number {
    return this.#wall();
  }

  answered(startedAt: number): void {
    this.#tenths.add(Math.round((this.#wall() - startedAt) * 10));
  }

  get count(): number {
    return this.#tenths.count;
  }

  /** The p-th percentile, ms (0 without an answer). */
  percentileMs(p: number): number {
    return (this.#tenths.percentile(p) || 0) / 10;
  }
}
