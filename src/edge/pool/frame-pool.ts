import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { transferablesOf, type FrameTask, type FrameTaskResult, type TaskRunner } from '../frame/task.js';

/**
 * The Piscina adapter: the only module that knows about worker threads. From `dist/` the
 * worker is the compiled `worker.js` next to this file; from TypeScript sources (Vitest,
 * `tsx`) it is `worker.ts`, loaded with tsx registered in the worker.
 */
export function poolRunner(workers: number): TaskRunner {
  const js = new URL('./worker.js', import.meta.url);
  const ts = new URL('./worker.ts', import.meta.url);
  const useJs = existsSync(fileURLToPath(js));
  const pool = new Piscina({
    filename: (useJs ? js : ts).href,
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: 60_000,
    ...(useJs ? {} : { execArgv: ['--import', 'tsx'] }),
  });
  return {
    async run(tasks: FrameTask[]): Promise<FrameTaskResult[]> {
      return Promise.all(tasks.map((t) => pool.run(t, { transferList: transferablesOf(t) }) as Promise<FrameTaskResult>));
    },
    close: () => pool.destroy(),
  };
}
