import type { Rng } from '../core/rng.js';

/**
 * When a failed delivery is tried again. Exponential backoff with "full jitter" (AWS
 * Architecture Blog, "Exponential Backoff And Jitter"): attempt n waits a uniform draw in
 * [base·2^(n-1)/2, base·2^(n-1)], capped, so endpoints recovering from an outage are not hit by
 * every retry at once; the draws come from a seeded stream per endpoint, so a run at
 * `--speed max` retries at the same simulated instants every time. A 429 or 503 with
 * Retry-After waits at least that long. All times are on the platform clock.
 */
export interface RetryPolicy {
  /** First retry's upper bound, ms. */
  baseMs: number;
  /** No single wait is longer, ms. */
  capMs: number;
  /** Attempts in all (the first one included); after the last a delivery is dead-lettered. */
  maxAttempts: number;
  /** Retry-After beyond this is taken as this (a hostile or confused endpoint cannot park us for a year), ms. */
  maxRetryAfterMs: number;
}

/**
 * Default: 36 attempts, 5 s doubling to a 1 h cap: the dead letter comes between 13.2 and 26.4
 * simulated hours after the first failure (mean 19.8 h), so a receiver down overnight loses nothing.
 */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({
  baseMs: 5_000,
  capMs: 3_600_000,
  maxAttempts: 36,
  maxRetryAfterMs: 6 * 3_600_000,
});

/** What an attempt's outcome means for the delivery. */
export type Outcome =
  | { kind: 'delivered'; status: number }
  /** 5xx, 408, 429, a timeout or a connection error: worth trying again. */
  | { kind: 'retryable'; reason: string; retryAfterMs?: number }
  /** Any other 4xx, a redirect, a refused address: trying again would give the same answer. */
  | { kind: 'permanent'; reason: string };

/** Classifies an HTTP status (Retry-After already parsed to ms, or undefined). */
export function outcomeOfStatus(status: number, retryAfterMs?: number): Outcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status >= 500 || status === 408 || status === 429) {
    return retryAfterMs !== undefined && (status === 429 || status === 503)
      ? { kind: 'retryable', reason: `HTTP ${status}`, retryAfterMs }
      : { kind: 'retryable', reason: `HTTP ${status}` };
  }
  // Redirects are not followed: the destination must be the checked one (SSRF), so a 3xx is an error of the subscription's URL.
  return { kind: 'permanent', reason: `HTTP ${status}` };
}

/** RFC 9110 §10.2.3: delay-seconds or an HTTP-date, relative to `nowMs`; undefined when absent or malformed. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * The wait before attempt `attempt + 1` after attempt `attempt` (1-based) failed, or null when
 * it was the last. `rng` is the endpoint's seeded stream.
 */
export function nextDelayMs(policy: RetryPolicy, attempt: number, outcome: Outcome, rng: Rng): number | null {
  if (outcome.kind !== 'retryable' || attempt >= policy.maxAttempts) return null;
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
  const jittered = Math.round(rng.uniform(ceiling / 2, ceiling));
  const after = outcome.retryAfterMs === undefined ? 0 : Math.min(outcome.retryAfterMs, policy.maxRetryAfterMs);
  return Math.max(jittered, after);
}
