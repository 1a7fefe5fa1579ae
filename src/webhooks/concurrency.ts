/**
 * The per-subscription concurrency limit: requests of one subscription in flight to its
 * endpoint, pipelined on its own keep-alive HTTP/1.1 connection (webhooks/sender.ts). One
 * connection keeps the order in which its bodies reach a receiver the order they were sent;
 * the limit is how deep that pipeline goes.
 * Set per subscription by a scenario's `webhooks[].concurrency`, the default by
 * `occusim run/serve --webhook-concurrency N`. Bounded: a receiver holds this many requests of
 * ours at once, and undici keeps a request object per slot.
 */
export const DEFAULT_WEBHOOK_CONCURRENCY = 16;
export const MIN_WEBHOOK_CONCURRENCY = 1;
export const MAX_WEBHOOK_CONCURRENCY = 64;

/** Null when `n` is a valid limit, else why not (the caller locates it: a flag, a file's field). */
export function concurrencyProblem(n: number): string | null {
  return Number.isInteger(n) && n >= MIN_WEBHOOK_CONCURRENCY && n <= MAX_WEBHOOK_CONCURRENCY
    ? null
    : `an integer in ${MIN_WEBHOOK_CONCURRENCY}..${MAX_WEBHOOK_CONCURRENCY}, got ${n}`;
}
