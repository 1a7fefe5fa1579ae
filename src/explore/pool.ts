import { availableParallelism } from 'node:os';
import { startModuleWorker, workerCalls, type WorkerCalls } from '../core/worker-calls.js';
import type { FaultFile } from '../scenario/network-schema.js';
import type { RunOutcome } from './outcome.js';
import type { RunOneOptions } from './run-one.js';

/**
 * The explore worker threads (`--jobs`): each holds the scenario as loaded once and runs one
 * schedule at a time; a run goes to the first idle thread. A run's result does not depend on
 * which thread ran it (each run is deterministic on its own), so neither does the search's.
 */
export interface ExploreRunRequest {
  id: number;
  faults: FaultFile[];
}

export interface RunPool {
  run(faults: FaultFile[]): Promise<RunOutcome>;
  close(): Promise<void>;
}

/** Most worker threads `--jobs` starts: each run holds a platform, a store and a broker port. */
export const MAX_JOBS = 64;

/**
 * `--jobs auto`: one thread per core. A run keeps its thread busy (the broker-restart fault's
 * reconnect wait is its only idle time), so more threads than cores only share the cores.
 */
export function autoJobs(): number {
  return Math.max(1, availableParallelism());
}

export async function startRunPool(jobs: number, options: RunOneOptions): Promise<RunPool> {
  const workers = await Promise.all(
    Array.from({ length: jobs }, async () => {
      const worker = startModuleWorker(import.meta.url, 'worker', options);
      const { calls } = await workerCalls<Omit<ExploreRunRequest, 'id'>, { kind: 'ready' }>(worker, {
        what: 'explore worker',
        fallback: null,
      });
      return { worker, calls };
    }),
  );
  const idle: Array<WorkerCalls<Omit<ExploreRunRequest, 'id'>>> = workers.map((w) => w.calls);
  const waiting: Array<(calls: WorkerCalls<Omit<ExploreRunRequest, 'id'>>) => void> = [];
  const release = (calls: WorkerCalls<Omit<ExploreRunRequest, 'id'>>): void => {
    const next = waiting.shift();
    if (next) next(calls);
    else idle.push(calls);
  };
  return {
    async run(faults) {
      const calls =
        idle.pop() ??
        (await new Promise<WorkerCalls<Omit<ExploreRunRequest, 'id'>>>((resolve) => waiting.push(resolve)));
      try {
        return await calls.call<RunOutcome>({ faults });
      } finally {
        release(calls);
      }
    },
    async close() {
      await Promise.all(workers.map((w) => w.worker.terminate()));
    },
  };
}
