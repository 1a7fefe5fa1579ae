import { parentPort, workerData } from 'node:worker_threads';
import { isAppError } from '../core/errors.js';
import type { WorkerReply } from '../core/worker-calls.js';
import type { ExploreRunRequest } from './pool.js';
import { runOne, type RunOneOptions } from './run-one.js';

/**
 * An explore worker thread: gets the scenario as loaded once (workerData) and runs the
 * schedules it is sent one at a time, each a whole run (platform, hives, simulator) in this
 * thread. Long-lived: its code is compiled and warm after the first run (a cold run costs ~3×).
 */
const port = parentPort;
if (!port) throw new Error('explore worker must run in a worker thread');
const options = workerData as RunOneOptions;

port.on('message', (r: ExploreRunRequest) => {
  runOne(options, r.faults).then(
    (value) => port.postMessage({ kind: 'result', id: r.id, value } satisfies WorkerReply),
    (err: unknown) =>
      port.postMessage({
        kind: 'error',
        id: r.id,
        code: isAppError(err) ? err.code : null,
        message: err instanceof Error ? err.message : String(err),
      } satisfies WorkerReply),
  );
});
port.postMessage({ kind: 'ready' });
