import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { Cached, CallScope } from '../../src/mcp/cache.js';

/** The caches' contract: reuse within a call and a TTL, answer stale while refreshing, never keep a failure. */
function counter() {
  let n = 0;
  let fail = false;
  const gate: Array<() => void> = [];
  return {
    load: () => (fail ? Promise.reject(new Error('down')) : new Promise<number>((r) => gate.push(() => r(++n)))),
    release: () => gate.splice(0).forEach((f) => f()),
    fail: (x: boolean) => void (fail = x),
    loads: () => n + gate.length,
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('Cached', () => {
  it('reuses a value within its TTL, then answers the stale value while one fresh read runs', async () => {
    const clock = new VirtualClock(0);
    const scope = new CallScope();
    const src = counter();
    const c = new Cached(src.load, { clock, ttlMs: 1000, scope, staleWhileRevalidate: true });
    const first = c.get();
    src.release();
    expect(await first).toBe(1);
    scope.next();
    clock.advanceTo(999);
    expect(await c.get()).toBe(1);
    clock.advanceTo(1500);
    expect(await c.get()).toBe(1); // stale, answered at once
    expect(await c.get()).toBe(1); // one refresh in flight, not two
    expect(src.loads()).toBe(2);
    src.release();
    await flush();
    expect(await c.get()).toBe(2);
  });

  it('with a TTL of 0 reads once per call and never answers stale', async () => {
    const clock = new VirtualClock(0);
    const scope = new CallScope();
    const src = counter();
    const c = new Cached(src.load, { clock, ttlMs: 0, scope, staleWhileRevalidate: true });
    const a = c.get();
    const b = c.get();
    src.release();
    expect([await a, await b]).toEqual([1, 1]);
    scope.next();
    const next = c.get();
    src.release();
    expect(await next).toBe(2);
  });

  it('does not keep a failed read', async () => {
    const clock = new VirtualClock(0);
    const scope = new CallScope();
    const src = counter();
    const c = new Cached(src.load, { clock, ttlMs: 60_000, scope });
    src.fail(true);
    await expect(c.get()).rejects.toThrow('down');
    await flush();
    src.fail(false);
    const again = c.get();
    src.release();
    expect(await again).toBe(1);
  });
});
