import { move, transferableSymbol, valueSymbol } from 'piscina';
import { runTask, transferablesOf, type FrameTask, type FrameTaskResult } from '../frame/task.js';

/**
 * Piscina worker: runs frame tasks. State buffers and outputs go back moved (transferred,
 * not copied), so a sensor's state is always where its next task is built, whatever worker
 * ran it.
 */
export default function frameWorker(task: FrameTask): unknown {
  const result: FrameTaskResult = runTask(task);
  return move({
    [transferableSymbol]: transferablesOf(result),
    [valueSymbol]: result,
  } as never);
}
