import { runPacked, type PackedResult, type PackedTask } from './packed.js';
import { runTask, type FrameTask, type FrameTaskResult } from './task.js';

/**
 * Runs tasks somewhere (in this thread, or a worker pool) and returns results in task order.
 * Tasks are taken from the iterable one at a time, so a pool is already running the first
 * while the caller builds the next (a lazy iterable overlaps building with running).
 */
export interface TaskRunner {
  run(tasks: Iterable<FrameTask>): Promise<FrameTaskResult[]>;
  /**
   * Tasks already packed (packed.ts): what the frame stage hands over, from buffers it reuses
   * interval after interval. The states are updated in place in each task's buffer.
   */
  runPacked(tasks: Iterable<PackedTask>): Promise<PackedResult[]>;
  close(): Promise<void>;
}

/** The in-thread runner (`workers: 0`, the frames viewer and tests). */
export function inThreadRunner(): TaskRunner {
  return {
    run: (tasks) => Promise.resolve(Array.from(tasks, runTask)),
    runPacked: (tasks) => Promise.resolve(Array.from(tasks, runPacked)),
    close: () => Promise.resolve(),
  };
}
