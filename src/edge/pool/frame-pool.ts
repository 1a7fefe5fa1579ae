import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { capHeapGrowth } from '../../core/heap-growth.js';
import { packTask, unpackResult, type PackedResult, type PackedTask } from '../frame/packed.js';
import type { TaskRunner } from '../frame/runner.js';
import type { FrameTask, FrameTaskResult } from '../frame/task.js';

/**
 * Tasks queued in each worker at once: the next task is already there when one finishes,
 * so a worker never idles for a round trip to the main thread between tasks.
 */
const TASKS_PER_WORKER = 4;

/**
 * Growth of every heap capped at 1.5× the live set in a run with frame workers (heap-growth.ts):
 * the loop waits for the workers, so the extra collections cost it nothing measurable.
 * fleet.yaml (tp-32x32), 1 simulated minute, 2 workers: peak RSS 2.40 → 1.93 GB, loop CPU
 * 53.6 → 53.9 s.
 */
const FRAME_RUN_HEAP_GROWTH_PERCENT = 50;

/**
 * The Piscina adapter: the only module that knows about worker threads. From `dist/` the
 * worker is the compiled `worker.js` next to this file; from TypeScript sources (Vitest,
 * `tsx`) it is `worker.ts`, loaded with tsx registered in the worker. Each task travels
 * packed in one shared buffer (packed.ts): shared, never transferred.
 */
export function poolRunner(workers: number): TaskRunner {
  capHeapGrowth(FRAME_RUN_HEAP_GROWTH_PERCENT);
  const js = new URL('./worker.js', import.meta.url);
  const ts = new URL('./worker.ts', import.meta.url);
  const useJs = existsSync(fileURLToPath(js));
  const pool = new Piscina({
    filename: (useJs ? js : ts).href,
    minThreads: workers,
    maxThreads: workers,
    concurrentTasksPerWorker: TASKS_PER_WORKER,
    idleTimeout: 60_000,
    ...(useJs ? {} : { execArgv: ['--import', 'tsx'] }),
  });
  const runOne = async (task: FrameTask): Promise<FrameTaskResult> => {
    const packed = packTask(task);
    const outputs = (await pool.run(packed)) as PackedResult;
    return unpackResult(task, packed, outputs);
  };
  const runPackedOne = async (task: PackedTask): Promise<PackedResult> => (await pool.run(task)) as PackedResult;
  return {
    run: (tasks: Iterable<FrameTask>) => runWindowed(tasks, workers * TASKS_PER_WORKER * 2, runOne),
    runPacked: (tasks: Iterable<PackedTask>) => runWindowed(tasks, workers * TASKS_PER_WORKER * 2, runPackedOne),
    close: () => pool.destroy(),
  };
}

/**
 * Runs the tasks with at most `limit` packed at once, results in task order. A task built from
 * `FrameTask`s holds a copy of its sensors' states (the packed path's states live in their
 * task slot instead: frame/packed.ts): packing a drain's every task up front (Array.from) held a
 * second copy of the whole fleet's states — 12.7 KB a tp-32x32 sensor, ~390 MB for fleet.yaml —
 * until the next collection. Twice the pool's queue keeps every worker's queue full.
 */
export async function runWindowed<T, R>(items: Iterable<T>, limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const source = items[Symbol.iterator]();
  const results: R[] = [];
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    for (let item = source.next(); !item.done && !failed; item = source.next()) {
      const k = next++;
      try {
        results[k] = await run(item.value);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, lane));
  return results;
}
