import { describe, expect, it } from 'vitest';
import { VerificationQueue } from '../../../src/api/auth/verify-queue.js';

/** A verification the test finishes by hand, recording when it started. */
function manual(log: string[], name: string): { run: () => Promise<string>; finish: () => void } {
  let finish = (): void => {};
  return {
    run: () => {
      log.push(name);
      return new Promise<string>((resolve) => (finish = () => resolve(name)));
    },
    finish: () => finish(),
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('password verification queue', () => {
  it('runs at most `concurrency` verifications and serves a newcomer source before the rest of a flood', async () => {
    const q = new VerificationQueue({ concurrency: 2, maxPendingPerSource: 10, maxRunningPerSource: 2 });
    const started: string[] = [];
    const flood = Array.from({ length: 8 }, (_, i) => manual(started, `a${i}`));
    const results = flood.map((j) => q.run('A', j.run));
    const legit = manual(started, 'b0');
    const legitResult = q.run('B', legit.run);
    await tick();
    expect(started).toEqual(['a0', 'a1']);
    flood[0]!.finish();
    await tick();
    // The next free slot goes to B, although six of A's were queued first.
    expect(started).toEqual(['a0', 'a1', 'b0']);
    legit.finish();
    expect(await legitResult).toBe('b0');
    for (const j of flood) {
      await tick();
      j.finish();
    }
    expect(await Promise.all(results)).toEqual(flood.map((_, i) => `a${i}`));
  });

  it('keeps a slot free for other sources while one source floods: a newcomer starts at once', async () => {
    const q = new VerificationQueue({ concurrency: 2, maxPendingPerSource: 10, maxRunningPerSource: 1 });
    const started: string[] = [];
    const flood = Array.from({ length: 4 }, (_, i) => manual(started, `a${i}`));
    const results = flood.map((j) => q.run('A', j.run));
    await tick();
    expect(started).toEqual(['a0']);
    const legit = manual(started, 'b0');
    const legitResult = q.run('B', legit.run);
    await tick();
    expect(started).toEqual(['a0', 'b0']);
    legit.finish();
    expect(await legitResult).toBe('b0');
    for (const j of flood) {
      await tick();
      j.finish();
    }
    expect(await Promise.all(results)).toEqual(['a0', 'a1', 'a2', 'a3']);
  });

  it('refuses a source’s verification beyond its pending bound with 429 while others still queue', async () => {
    const q = new VerificationQueue({ concurrency: 1, maxPendingPerSource: 2, maxRunningPerSource: 1 });
    const log: string[] = [];
    const jobs = [manual(log, 'a0'), manual(log, 'a1')];
    const running = jobs.map((j) => q.run('A', j.run));
    await expect(q.run('A', async () => 'a2')).rejects.toMatchObject({ status: 429, retryAfterS: 1 });
    const other = q.run('B', async () => 'b0');
    jobs[0]!.finish();
    await tick();
    jobs[1]!.finish();
    expect(await Promise.all([...running, other])).toEqual(['a0', 'a1', 'b0']);
  });
});
