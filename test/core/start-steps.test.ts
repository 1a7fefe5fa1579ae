import { describe, expect, it } from 'vitest';
import { startSteps, type StartStep } from '../../src/core/start-steps.js';

/** Steps that log their starts and stops; `failAt` makes that step's start throw. */
function logged(names: readonly string[], log: string[], failAt: string | null = null): StartStep<string[]>[] {
  return names.map((name) => ({
    name,
    start: async () => {
      if (name === failAt) throw new Error(`${name} failed`);
      log.push(`start ${name}`);
      // Every other step has nothing to stop: those are skipped on the way back.
      return name === 'b' ? undefined : () => void log.push(`stop ${name}`);
    },
  }));
}

describe('startSteps', () => {
  it('starts in order, stops in reverse, reports each started step, and stops once', async () => {
    const log: string[] = [];
    const started: string[] = [];
    const s = await startSteps(logged(['a', 'b', 'c'], log), log, { onStarted: (n) => started.push(n) });
    await s.stop();
    await s.stop();
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop a']);
    expect(started).toEqual(['a', 'b', 'c']);
  });

  it('on a failure stops what started, last first, and rethrows the step’s own error', async () => {
    const log: string[] = [];
    await expect(startSteps(logged(['a', 'b', 'c', 'd'], log, 'c'), log)).rejects.toThrow('c failed');
    expect(log).toEqual(['start a', 'start b', 'stop a']);
  });

  it('stops every part even when some stops fail, and reports them all', async () => {
    const failing = (name: string): StartStep<null> => ({
      name,
      start: () => () => {
        throw new Error(`${name} stop failed`);
      },
    });
    let cStopped = false;
    const steps = [failing('a'), failing('b'), { name: 'c', start: () => () => void (cStopped = true) }];
    const s = await startSteps(steps, null);
    const err = await s.stop().catch((e: unknown) => e);
    expect(cStopped).toBe(true);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual(['b stop failed', 'a stop failed']);
  });
});
