import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rngFor } from '../../src/core/rng.js';
import { DEFAULT_RETRY, nextDelayMs, outcomeOfStatus, parseRetryAfter } from '../../src/webhooks/retry.js';

const SEED = 4242;

describe('webhook retry schedule', () => {
  it('retries 5xx, 408, 429 and gives up on other 4xx and on redirects', () => {
    expect(outcomeOfStatus(200)).toEqual({ kind: 'delivered', status: 200 });
    expect(outcomeOfStatus(204).kind).toBe('delivered');
    for (const s of [500, 502, 503, 504, 408, 429]) expect(outcomeOfStatus(s).kind, String(s)).toBe('retryable');
    for (const s of [301, 302, 307, 400, 401, 403, 404, 410, 422])
      expect(outcomeOfStatus(s).kind, String(s)).toBe('permanent');
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('waits within the jittered exponential window, never past the cap, and stops after the last attempt', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: DEFAULT_RETRY.maxAttempts }), fc.string(), (attempt, entity) => {
        const d = nextDelayMs(DEFAULT_RETRY, attempt, { kind: 'retryable', reason: 'HTTP 500' }, rngFor(1, entity));
        if (attempt === DEFAULT_RETRY.maxAttempts) return d === null;
        const ceiling = Math.min(DEFAULT_RETRY.capMs, DEFAULT_RETRY.baseMs * 2 ** (attempt - 1));
        return d !== null && d >= ceiling / 2 && d <= ceiling;
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('honours Retry-After of a 429 up to its ceiling', () => {
    const rng = rngFor(1, 'endpoint');
    expect(nextDelayMs(DEFAULT_RETRY, 1, { kind: 'retryable', reason: 'HTTP 429', retryAfterMs: 600_000 }, rng)).toBe(
      600_000,
    );
    expect(nextDelayMs(DEFAULT_RETRY, 1, { kind: 'retryable', reason: 'HTTP 429', retryAfterMs: 1e12 }, rng)).toBe(
      DEFAULT_RETRY.maxRetryAfterMs,
    );
    expect(nextDelayMs(DEFAULT_RETRY, 1, { kind: 'permanent', reason: 'HTTP 404' }, rng)).toBeNull();
  });

  it('draws the same delays from the same seed and endpoint', () => {
    const run = (): Array<number | null> => {
      const rng = rngFor(7, 'webhook_1');
      return [1, 2, 3, 4, 5].map((a) => nextDelayMs(DEFAULT_RETRY, a, { kind: 'retryable', reason: 'timeout' }, rng));
    };
    expect(run()).toEqual(run());
  });

  it('keeps a delivery for at least 13 simulated hours before dead-lettering it', () => {
    let min = 0;
    for (let a = 1; a < DEFAULT_RETRY.maxAttempts; a++)
      min += Math.min(DEFAULT_RETRY.capMs, DEFAULT_RETRY.baseMs * 2 ** (a - 1)) / 2;
    expect(min).toBeGreaterThan(13 * 3_600_000);
  });
});
