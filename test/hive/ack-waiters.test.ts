import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { AckWaiters } from '../../src/hive/ack-waiters.js';

describe('ack waiters', () => {
  it('settles every wait up to a cumulative ack and leaves later ones pending', async () => {
    const w = new AckWaiters(10_000, 't');
    const settled: number[] = [];
    const waits = [1, 2, 3].map((seq) => w.wait(seq).promise.then(() => settled.push(seq)));
    expect(w.ack(2)).toBe(2);
    await Promise.all(waits.slice(0, 2));
    expect(settled).toEqual([1, 2]);
    expect(w.pending).toBe(1);
    w.rejectAll(new Error('end'));
    await expect(waits[2]).rejects.toThrow('end');
    expect(settled).toEqual([1, 2]);
  });

  it('rejects with TIMEOUT when no ack comes in time', async () => {
    const w = new AckWaiters(20, 'hive X');
    const err = await w.wait(7).promise.catch((e: unknown) => e);
    expect(isAppError(err, 'TIMEOUT')).toBe(true);
    expect((err as Error).message).toMatch(/seq 7/);
    expect(w.pending).toBe(0);
  });

  it('ignores an ack after a cancel, and a cancel after an ack', async () => {
    const w = new AckWaiters(10_000, 't');
    const a = w.wait(1);
    a.cancel(new Error('gone'));
    await expect(a.promise).rejects.toThrow('gone');
    expect(w.ack(5)).toBe(0);
    const b = w.wait(2);
    w.ack(2);
    b.cancel(new Error('late'));
    await expect(b.promise).resolves.toBeUndefined();
  });
});
