import { AppError, ErrorCodes } from '../../core/errors.js';

/**
 * Bounds how many password verifications run at once, served fairly across sources.
 *
 * Each verification is a 128 MiB scrypt on the libuv thread pool (4 threads, 2 cores here);
 * unbounded, 8 concurrent bogus logins took a legitimate one from 1.0 s to 3–5 s and could
 * hold 1 GiB. Jobs wait in one queue per source; one source runs at most
 * `maxRunningPerSource` at once, and a free slot goes to the waiting source with the fewest
 * running (round-robin among equals), so a legitimate login takes the next free slot ahead
 * of a flood, never behind it. A source with `maxPendingPerSource` verifications queued or running is
 * answered 429 at once, without spending any scrypt on it.
 */
export interface VerificationQueueOptions {
  /** Verifications running at once. */
  concurrency: number;
  /** Verifications one source may have queued or running. */
  maxPendingPerSource: number;
  /**
   * Verifications one source may have running: below `concurrency`, a slot stays free for
   * other sources, so a flood from one address never delays a login from another.
   */
  maxRunningPerSource: number;
}

export const DEFAULT_VERIFICATION_QUEUE: VerificationQueueOptions = {
  concurrency: 2,
  maxPendingPerSource: 4,
  maxRunningPerSource: 1,
};

interface Job {
  start(): void;
}

export class VerificationQueue {
  readonly #opts: VerificationQueueOptions;
  /** Waiting jobs per source; the map's order is the round-robin order. */
  readonly #waiting = new Map<string, Job[]>();
  readonly #pending = new Map<string, number>();
  readonly #runningBy = new Map<string, number>();
  #running = 0;

  constructor(opts: VerificationQueueOptions = DEFAULT_VERIFICATION_QUEUE) {
    if (!(opts.concurrency >= 1) || !(opts.maxPendingPerSource >= 1) || !(opts.maxRunningPerSource >= 1)) {
      throw new RangeError('VerificationQueue: concurrency, maxPendingPerSource and maxRunningPerSource must be ≥ 1');
    }
    this.#opts = opts;
  }

  /** Runs `verify` when its turn comes; rejects with LOGIN_THROTTLED (429) when `source` has too many pending. */
  run<T>(source: string, verify: () => Promise<T>): Promise<T> {
    const pending = this.#pending.get(source) ?? 0;
    if (pending >= this.#opts.maxPendingPerSource) {
      return Promise.reject(
        new AppError(ErrorCodes.LOGIN_THROTTLED, 'too many logins in progress from this address; retry in 1 s', {
          retryAfterS: 1,
        }),
      );
    }
    this.#pending.set(source, pending + 1);
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        this.#running++;
        this.#runningBy.set(source, (this.#runningBy.get(source) ?? 0) + 1);
        verify()
          .then(resolve, reject)
          .finally(() => this.#finish(source));
      };
      const queue = this.#waiting.get(source);
      if (queue) queue.push({ start });
      else this.#waiting.set(source, [{ start }]);
      this.#drain();
    });
  }

  #finish(source: string): void {
    this.#running--;
    const running = (this.#runningBy.get(source) ?? 1) - 1;
    if (running === 0) this.#runningBy.delete(source);
    else this.#runningBy.set(source, running);
    const left = (this.#pending.get(source) ?? 1) - 1;
    if (left === 0) this.#pending.delete(source);
    else this.#pending.set(source, left);
    this.#drain();
  }

  #drain(): void {
    while (this.#running < this.#opts.concurrency) {
      const source = this.#nextSource();
      if (source === null) return;
      const queue = this.#waiting.get(source) as Job[];
      const job = queue.shift() as Job;
      // The served source goes to the back of the round.
      this.#waiting.delete(source);
      if (queue.length > 0) this.#waiting.set(source, queue);
      job.start();
    }
  }

  /** The first waiting source (round-robin order) among those with the fewest running, below their cap. */
  #nextSource(): string | null {
    let best: string | null = null;
    let fewest = this.#opts.maxRunningPerSource;
    for (const source of this.#waiting.keys()) {
      const running = this.#runningBy.get(source) ?? 0;
      if (running < fewest) [best, fewest] = [source, running];
    }
    return best;
  }
}
