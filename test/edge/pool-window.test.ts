import { describe, expect, it } from 'vitest';
import { runWindowed } from '../../src/edge/pool/frame-pool.js';

describe('frame tasks run through a window', () => {
  it('keeps at most `limit` tasks packed at once and answers in task order', async () => {
    let live = 0;
    let most = 0;
    let built = 0;
    function* tasks(): Generator<number> {
      for (let k = 0; k < 40; k++) {
        built++;
        yield k;
      }
    }
    const results = await runWindowed(tasks(), 6, async (k) => {
      live++;
      most = Math.max(most, live);
      // Later tasks finish first: the order of the answers must not follow completion.
      await new Promise((resolve) => setTimeout(resolve, (40 - k) % 7));
      live--;
      return k * 10;
    });
    expect(results).toEqual(Array.from({ length: 40 }, (_, k) => k * 10));
    expect(most).toBe(6);
    expect(built).toBe(40);
  });

  it('fails with the first failure and builds no task after it', async () => {
    let built = 0;
    function* tasks(): Generator<number> {
      for (let k = 0; k < 100; k++) {
        built++;
        yield k;
      }
    }
    await expect(
      runWindowed(tasks(), 2, async (k) => {
        await Promise.resolve();
        if (k === 3) throw new Error('task 3 failed');
        return k;
      }),
    ).rejects.toThrow('task 3 failed');
    expect(built).toBeLessThan(10);
  });
});
