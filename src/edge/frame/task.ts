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
