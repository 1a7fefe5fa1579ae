import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import type { EdgePackets } from '../../src/edge/edge-packets.js';
import { DELIVERIES_IN_FLIGHT, simulate, type LoopContext } from '../../src/run/loop.js';

/**
 * The loop's hand-off with doubles of the world, edge, delivery stage and platform (one module
 * under test): deliveries overlap the simulation, yet every call reaches the stage and the
 * platform in the order of one delivery at a time, and no more than `DELIVERIES_IN_FLIGHT`
 * intervals are ever under way.
 */
const TICK = 1_000;
const INTERVAL = 10_000;

function loopDoubles(flushTurns: number) {
  const log: string[] = [];
  let drains = 0;
  let advanced = 0;
  let maxUnderWay = 0;
  const turns = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  const ctx = {
    model: { startMs: 0, durationMs: 60_000, tickMs: TICK, batchIntervalMs: INTERVAL, sensors: [] },
    clock: new VirtualClock(0),
    world: {
      step: (t: number) => {
        // Drained intervals whose `advanceTo` has not returned yet.
        maxUnderWay = Math.max(maxUnderWay, drains - advanced);
        return { t };
      },
    },
    truth: { observe: () => undefined },
    edge: {
      observe: () => undefined,
      drain: () => {
        drains++;
        // The interval's number where a packet's sensor index would be.
        return Promise.resolve<EdgePackets>({ data: Float64Array.of(drains), count: 1, release: () => undefined });
      },
      close: () => Promise.resolve(),
    },
    delivery: {
      submit: (packets: EdgePackets) => log.push(`submit interval-${packets.data[0]}`),
      flush: async (atMs: number) => {
        log.push(`flush ${atMs}`);
        await turns(flushTurns);
        log.push(`acked ${atMs}`);
        return 1;
      },
      stats: () => ({ packetsSubmitted: 0, batchesPublished: 0 }),
    },
    platform: {
      advanceTo: async (t: number) => {
        await turns(1);
        advanced++;
        log.push(`advance ${t}`);
      },
    },
    speed: 'max',
    onProgress: null,
  } as unknown as LoopContext;
  return { ctx, log, maxUnderWay: () => maxUnderWay };
}

describe('the simulation loop hand-off', () => {
  it('keeps one delivery order: packets after the previous flush was called, a flush after the previous advanceTo', async () => {
    const { ctx, log } = loopDoubles(5);
    const stats = await simulate(ctx);
    expect(stats.ticks).toBe(60);
    // Six intervals, then the end's flush of what is left (the same instant again).
    const ats = [9_000, 19_000, 29_000, 39_000, 49_000, 59_000, 59_000];
    const expected = ats.flatMap((at, k) => [
      `submit interval-${k + 1}`,
      `flush ${at}`,
      `acked ${at}`,
      `advance ${at}`,
    ]);
    // A submit may come before the previous delivery's acks and advance, never before its flush.
    const at = (kind: string): number[] => log.flatMap((l, i) => (l.startsWith(kind) ? [i] : []));
    const [submits, flushes, advances] = [at('submit'), at('flush'), at('advance')];
    ats.forEach((_, k) => {
      expect(flushes[k]).toBeGreaterThan(submits[k] as number);
      if (k === 0) return;
      expect(submits[k]).toBeGreaterThan(flushes[k - 1] as number);
      expect(flushes[k]).toBeGreaterThan(advances[k - 1] as number);
    });
    // Without the submits, the calls are exactly those of one delivery at a time.
    expect(log.filter((l) => !l.startsWith('submit'))).toEqual(expected.filter((l) => !l.startsWith('submit')));
    expect(log.filter((l) => l.startsWith('submit'))).toEqual(expected.filter((l) => l.startsWith('submit')));
  });

  it(`simulates on while deliveries are slow, never more than ${DELIVERIES_IN_FLIGHT} intervals under way`, async () => {
    const { ctx, maxUnderWay } = loopDoubles(50);
    await simulate(ctx);
    expect(maxUnderWay()).toBe(DELIVERIES_IN_FLIGHT);
  });

  it('fails the run with a failed delivery, and the later ones with it', async () => {
    const { ctx } = loopDoubles(1);
    let flushes = 0;
    const flush = ctx.delivery.flush.bind(ctx.delivery);
    ctx.delivery.flush = (atMs) => (++flushes === 2 ? Promise.reject(new Error('broker gone')) : flush(atMs));
    await expect(simulate(ctx)).rejects.toThrow('broker gone');
    expect(flushes).toBe(2);
  });
});
