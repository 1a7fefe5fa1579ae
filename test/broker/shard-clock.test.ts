import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { decodeShardClock, encodeShardClock, ShardClocks, shardClockTopic } from '../../src/broker/shard-clock.js';

describe("the shards' clock channel", () => {
  it("round-trips a message and refuses one that is malformed or on another shard's topic, naming the topic", () => {
    const m = { index: 2, count: 3, t: 1_772_438_400_000, done: false };
    expect(decodeShardClock(shardClockTopic(2), encodeShardClock(m))).toEqual(m);
    expect(decodeShardClock(shardClockTopic(2), Buffer.from('{'))).toBe('occusim/v1/control/shards/2/clock: not JSON');
    expect(decodeShardClock(shardClockTopic(2), encodeShardClock({ ...m, index: 4 }))).toMatch(
      /want \{ index, count, t, done \} with 1 ≤ index ≤ count$/,
    );
    expect(decodeShardClock(shardClockTopic(1), encodeShardClock(m))).toBe(
      "occusim/v1/control/shards/1/clock: shard 2 on another shard's topic",
    );
  });

  it('follows the slowest shard once each has spoken, never back, and is done when all are', () => {
    const c = new ShardClocks(2);
    c.note({ index: 1, count: 2, t: 100, done: false });
    expect(c.min()).toBeNull();
    c.note({ index: 2, count: 2, t: 50, done: false });
    expect(c.min()).toBe(50);
    c.note({ index: 2, count: 2, t: 40, done: false }); // a shard's clock never moves back
    expect(c.min()).toBe(50);
    c.note({ index: 1, count: 2, t: 200, done: true });
    expect(c.allDone()).toBe(false);
    c.note({ index: 2, count: 2, t: 200, done: true });
    expect([c.min(), c.allDone()]).toEqual([200, true]);
  });

  it('refuses a shard that counts differently from the ingest process (USAGE)', () => {
    let err: unknown = null;
    try {
      new ShardClocks(2).note({ index: 1, count: 3, t: 0, done: false });
    } catch (e) {
      err = e;
    }
    expect(isAppError(err, 'USAGE')).toBe(true);
    expect((err as Error).message).toBe('shard 1/3 reports to ingest processes declared for 2 shards (--shards)');
  });

  it('gives the minimum of the latest clocks whatever the interleaving of the shards (fast-check seed 14)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 1000 })), {
          minLength: 1,
          maxLength: 40,
        }),
        (msgs) => {
          const c = new ShardClocks(3);
          const latest = new Map<number, number>();
          for (const [index, t] of msgs) {
            c.note({ index, count: 3, t, done: false });
            latest.set(index, Math.max(t, latest.get(index) ?? t));
          }
          expect(c.min()).toBe(latest.size === 3 ? Math.min(...latest.values()) : null);
        },
      ),
      { seed: 14, numRuns: 200 },
    );
  });
});
