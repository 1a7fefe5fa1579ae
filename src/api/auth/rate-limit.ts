import type { Clock } from '../../core/clock.js';

/**
 * Failed-login limiter: after `maxFailures` failures for one key within `windowMs`, the key
 * is refused until the window has passed (answered 429 with Retry-After). A success clears
 * the key's record.
 */
export interface RateLimitOptions {
  maxFailures: number;
  windowMs: number;
  clock: Clock;
}

export class FailureLimiter {
  readonly #opts: RateLimitOptions;
  readonly #failures = new Map<string, number[]>();

  constructor(opts: RateLimitOptions) {
    this.#opts = opts;
  }

  /** Seconds to wait before `key` may try again; 0 when allowed. */
  retryAfterS(key: string): number {
    const recent = this.#recent(key);
    if (recent.length < this.#opts.maxFailures) return 0;
    const oldest = recent[recent.length - this.#opts.maxFailures] as number;
    return Math.max(1, Math.ceil((oldest + this.#opts.windowMs - this.#opts.clock.now()) / 1000));
  }

  fail(key: string): void {
    const recent = this.#recent(key);
    recent.push(this.#opts.clock.now());
    this.#failures.set(key, recent);
  }

  succeed(key: string): void {
    this.#failures.delete(key);
  }

  #recent(key: string): number[] {
    const since = this.#opts.clock.now() - this.#opts.windowMs;
    return (this.#failures.get(key) ?? []).filter((t) => t > since);
  }
}
