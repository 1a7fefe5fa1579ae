import { describe, expect, it } from 'vitest';
import type { SensorBatch } from '../../src/edge/frame/kernel.js';
import { packTask, runPacked, unpackResult } from '../../src/edge/frame/packed.js';
import { runTask, type FrameTask } from '../../src/edge/frame/task.js';
import { rig } from './frame-rig.js';

/** Three ticks of one walking and one seated person, in sensor metres. */
function batch(): SensorBatch {
  return {
    ticks: Float64Array.from([999_000, 1_000_000, 1_001_000, 1_002_000]),
    offsets: Int32Array.from([0, 2, 4, 6, 8]),
    ids: Int32Array.from([1, 2, 1, 2, 1, 2, 1, 2]),
    people: Float32Array.from([1, 1, 0, 32, 2, 2, 2, 31, 1.4, 1, 0, 32, 2, 2, 2, 31, 1.8, 1, 0, 32, 2, 2, 2, 31, 2.2, 1, 0, 32, 2, 2, 2, 31]),
  };
}

function task(): FrameTask {
  const rigs = [rig({ model: 'tp-8x8' }), rig({ model: 'tp-32x24', id: 'sensor_b', height: 4 }), rig({ model: 'tp-16x12', id: 'sensor_c', mode: 'traffic' })];
  return { specs: rigs.map((r) => r.spec), states: rigs.map((r) => r.state.buffer.slice(0)), batches: rigs.map(batch) };
}

describe('a frame task packed into one buffer for a worker', () => {
  it('gives the same states and outputs as the task run directly', () => {
    const direct = runTask(task());
    const t = task();
    const wire = packTask(t);
    const packed = unpackResult(t, wire, runPacked(wire));
    expect(packed.outputs.map((o) => Array.from(o))).toEqual(direct.outputs.map((o) => Array.from(o)));
    expect(packed.states.map((s) => Buffer.from(s).toString('hex'))).toEqual(direct.states.map((s) => Buffer.from(s).toString('hex')));
    expect(direct.outputs.some((o) => o.length > 0)).toBe(true);
  });

  it('writes the states back into the task’s own buffers, not new ones (one copy of the fleet’s states, not two)', () => {
    const t = task();
    const wire = packTask(t);
    const packed = unpackResult(t, wire, runPacked(wire));
    packed.states.forEach((s, i) => expect(s).toBe(t.states[i]));
  });
});
