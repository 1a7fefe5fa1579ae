import { runPacked, type PackedResult, type PackedTask } from '../frame/packed.js';

/**
 * Piscina worker: runs packed frame tasks (src/edge/frame/packed.ts). The task buffer is
 * shared: the states are updated in place, where the main thread reads them back, so a
 * sensor's state is always where its next task is built, whatever worker ran it. The outputs
 * go back by structured clone (a copy, small): nothing is ever transferred, because a
 * transfer detaches a buffer and the first detach slows every typed-array access of the
 * isolate (packed.ts).
 */
export default function frameWorker(task: PackedTask): PackedResult {
  return runPacked(task);
}
