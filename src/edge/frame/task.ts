import { runBatch, type BatchOutput, type SensorBatch } from './kernel.js';
import type { FrameSpec } from './spec.js';
import { stateViews } from './state.js';

/**
 * One unit of work for a worker: several sensors, each with its spec, its state buffer
 * (moved in and moved back) and its batch of ticks. Sensors are independent, so how they
 * are grouped into tasks never changes a result.
 */
export interface FrameTask {
  specs: FrameSpec[];
  states: ArrayBuffer[];
  batches: SensorBatch[];
}

export interface FrameTaskResult {
  states: ArrayBuffer[];
  outputs: BatchOutput[];
}

export function runTask(task: FrameTask): FrameTaskResult {
  const outputs = task.specs.map((spec, i) => {
    const st = stateViews(spec.cols * spec.rows, task.states[i] as ArrayBuffer);
    return runBatch(spec, st, task.batches[i] as SensorBatch);
  });
  return { states: task.states, outputs };
}

/**
 * Runs tasks somewhere (in this thread, or a worker pool) and returns results in task order.
 * Tasks are taken from the iterable one at a time, so a pool is already running the first
 * while the caller builds the next (a lazy iterable overlaps building with running).
 */
export interface TaskRunner {
  run(tasks: Iterable<FrameTask>): Promise<FrameTaskResult[]>;
  close(): Promise<void>;
}

/** The in-thread runner (`workers: 0`, the frames viewer and tests). */
export function inThreadRunner(): TaskRunner {
  return {
    run: (tasks) => Promise.resolve(Array.from(tasks, runTask)),
    close: () => Promise.resolve(),
  };
}
