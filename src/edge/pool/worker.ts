import { move, transferableSymbol, valueSymbol } from 'piscina';
import { runPacked, type PackedTask } from '../frame/packed.js';

/**
 * Piscina worker: runs packed frame tasks (src/edge/frame/packed.ts). The task buffer comes
 * back with the states updated in place, with the outputs: both moved (transferred, not
 * copied), so a sensor's state is always where its next task is built, whatever worker ran it.
 */
export default function frameWorker(task: PackedTask): unknown {
  const result = runPacked(task);
  return move({
    [transferableSymbol]: [result.buffer, result.outputs.buffer],
    [valueSymbol]: result,
  } as never);
}
