import type { Clock } from '../../core/clock.js';

/**
 * Failed-login limiter, keyed so that an attacker cannot lock the owner out:
 * - per (account, source): after `maxFailures` failures within `windowMs`, that account is
 *   refused *from that source* until the window has passed. Keyed by account alone, five
 *   wrong passwords from anywhere refused the right one from the owner's machine too.
 * - per source, over all accounts: after `maxFailures × SOURCE_BUDGET_FACTOR` failures, the
 *   source is refused whatever account it names, so spraying many user names (one or two
 *   guesses each, never tripping a per-account limit) is answered 429 after a budget.
 * Refusals are answered 429 with Retry-After; a success clears its (account, source) record.
 */
export interface RateLimitOptions {
  maxFailures: number;
  windowMs: number;
  clock: Clock;
}

/** A source may fail this many times the per-account limit across all accounts. */
export const SOURCE_BUDGET_FACTOR = 2;
/** Records kept at most; the oldest are dropped (a flood of sources must not grow memory unbounded). */
const MAX_KEYS = 100_000;

export class FailureLimiter {
  readonly #opts: RateLimitOptions;
  readonly #failures = new Map<string, number[]>();

  constructor(opts: RateLimitOptions) {
    this.#opts = opts;
  }

  /** Seconds `source` must wait before trying `account` again; 0 when allowed. */
  retryAfterS(account: string, source: string): number {
    const { maxFailures } = this.#opts;
    return Math.max(
      this.#wait(pairKey(account, source), maxFailures),
      this.#wait(sourceKey(source), maxFailures * SOURCE_BUDGET_FACTOR),
    );
  }

  fail(account: string, source: string): void {
    this.#record(pairKey(account, source));
    this.#record(sourceKey(source));
  }

  succeed(account: string, source: string): void {
    this.#failures.delete(pairKey(account, source));
  }

  #wait(key: string, limit: number): number {
    const recent = this.#recent(key);
    if (recent.length < limit) return 0;
    const oldest = recent[recent.length - limit] as number;
    return Math.max(1, Math.ceil((oldest + this.#opts.windowMs - this.#opts.clock.now()) / 1000));
  }

  #record(key: string): void {
    const recent = this.#recent(key);
    recent.push(this.#opts.clock.now());
    this.#failures.delete(key); // re-inserted last: the map's order is least recently failed first
    this.#failures.set(key, recent);
    if (this.#failures.size > MAX_KEYS) this.#failures.delete(this.#failures.keys().next().value as string);
  }

  #recent(key: string): number[] {
    const since = this.#opts.clock.now() - this.#opts.windowMs;
    return (this.#failures.get(key) ?? []).filter((t) => t > since);
  }
}

const pairKey = (account: string, source: string): string => `${account}\u0000${source}`;
const sourceKey = (source: string): string => `source\u0000${source}`;
