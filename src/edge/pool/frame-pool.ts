import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { packTask, unpackResult, type PackedResult } from '../frame/packed.js';
import type { FrameTask, FrameTaskResult, TaskRunner } from '../frame/task.js';

/**
 * Tasks queued in each worker at once: the next task is already there when one finishes,
 * so a worker never idles for a round trip to the main thread between tasks.
 */
const TASKS_PER_WORKER = 4;

/**
 * The Piscina adapter: the only module that knows about worker threads. From `dist/` the
 * worker is the compiled `worker.js` next to this file; from TypeScript sources (Vitest,
 * `tsx`) it is `worker.ts`, loaded with tsx registered in the worker. Each task travels
 * packed in one shared buffer (packed.ts): shared, never transferred.
 */
export function poolRunner(workers: number): TaskRunner {
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
  return {
    run: (tasks: Iterable<FrameTask>) => Promise.all(Array.from(tasks, runOne)),
    close: () => pool.destroy(),
  };
}
