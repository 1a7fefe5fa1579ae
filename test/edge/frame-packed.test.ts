import { describe, expect, it } from 'vitest';
import type { SensorBatch } from '../../src/edge/frame/kernel.js';
import { PackedTaskSlot, packTask, runPacked, unpackResult } from '../../src/edge/frame/packed.js';
import { stateBytes } from '../../src/edge/frame/state.js';
import { runTask, type FrameTask } from '../../src/edge/frame/task.js';
import { rig } from './frame-rig.js';

/** Three ticks of one walking and one seated person, in sensor metres. */
function batch(): SensorBatch {
  return {
    ticks: Float64Array.from([999_000, 1_000_000, 1_001_000, 1_002_000]),
    offsets: Int32Array.from([0, 2, 4, 6, 8]),
    ids: Int32Array.from([1, 2, 1, 2, 1, 2, 1, 2]),
    people: Float32Array.from([
      1, 1, 0, 32, 2, 2, 2, 31, 1.4, 1, 0, 32, 2, 2, 2, 31, 1.8, 1, 0, 32, 2, 2, 2, 31, 2.2, 1, 0, 32, 2, 2, 2, 31,
    ]),
  };
}

function task(): FrameTask {
  const rigs = [
    rig({ model: 'tp-8x8' }),
    rig({ model: 'tp-32x24', id: 'sensor_b', height: 4 }),
    rig({ model: 'tp-16x12', id: 'sensor_c', mode: 'traffic' }),
  ];
  return { specs: rigs.map((r) => r.spec), states: rigs.map((r) => r.state.buffer.slice(0)), batches: rigs.map(batch) };
}

describe('a frame task packed into one buffer for a worker', () => {
  it('gives the same states and outputs as the task run directly', () => {
    const direct = runTask(task());
    const t = task();
    const wire = packTask(t);
    const packed = unpackResult(t, wire, runPacked(wire));
    expect(packed.outputs.map((o) => Array.from(o))).toEqual(direct.outputs.map((o) => Array.from(o)));
    expect(packed.states.map((s) => Buffer.from(s).toString('hex'))).toEqual(
      direct.states.map((s) => Buffer.from(s).toString('hex')),
    );
    expect(direct.outputs.some((o) => o.length > 0)).toBe(true);
  });

  it('writes the states back into the task’s own buffers, not new ones (one copy of the fleet’s states, not two)', () => {
    const t = task();
    const wire = packTask(t);
    const packed = unpackResult(t, wire, runPacked(wire));
    packed.states.forEach((s, i) => expect(s).toBe(t.states[i]));
  });
});

describe('a task slot kept by the same sensors for the run', () => {
  it('keeps their states in its buffer from interval to interval, through growth, as running each interval directly does', () => {
    const direct = task();
    const slot = new PackedTaskSlot();
    const n = direct.specs.length;
    slot.begin(n);
    direct.specs.forEach((spec, i) => slot.placeFixed(i, spec));
    slot.allocate();
    direct.specs.forEach((spec, i) => slot.writeFixed(i, spec, new Uint8Array(direct.states[i] as ArrayBuffer)));
    slot.settle();
    // Interval 2 has more people than interval 1 fits: the buffer grows, the states carried over.
    for (const crowd of [1, 6, 2]) {
      const batches = direct.specs.map((_, i) => crowded(batch(), crowd + i));
      const expected = runTask({ ...direct, batches });
      slot.begin(n);
      direct.specs.forEach((spec, i) => slot.placeFixed(i, spec));
      batches.forEach((b, i) => slot.placeBatch(i, b.ticks.length, b.ids.length));
      slot.allocate();
      batches.forEach((b, i) =>
        slot.writeBatch(
          i,
          {
            writeBatch: (_s, ticks, tAt, offsets, oAt, ids, iAt, people, pAt) => (
              ticks.set(b.ticks, tAt),
              offsets.set(b.offsets, oAt),
              ids.set(b.ids, iAt),
              people.set(b.people, pAt)
            ),
          },
          0,
        ),
      );
      const wire = slot.task();
      const out = runPacked(wire);
      let off = 1 + n;
      direct.specs.forEach((spec, i) => {
        const len = out[1 + i] as number;
        expect(Array.from(out.subarray(off, off + len))).toEqual(Array.from(expected.outputs[i] as Float64Array));
        off += len;
        const bytes = stateBytes(spec.cols * spec.rows);
        expect(Buffer.from(slot.state(i, bytes)).toString('hex')).toBe(
          Buffer.from(expected.states[i] as ArrayBuffer).toString('hex'),
        );
      });
    }
  });
});

/** The batch with `k` copies of its people (ids kept apart), so an interval can need more room than the last. */
function crowded(b: SensorBatch, k: number): SensorBatch {
  const per = (b.offsets[1] as number) - (b.offsets[0] as number);
  const ticks = b.offsets.length - 1;
  const ids: number[] = [];
  const people: number[] = [];
  for (let t = 0; t < ticks; t++) {
    for (let c = 0; c < k; c++) {
      for (let q = 0; q < per; q++) {
        ids.push((b.ids[t * per + q] as number) + 10 * c);
        for (let f = 0; f < 4; f++) people.push((b.people[(t * per + q) * 4 + f] as number) + (f < 2 ? 0.3 * c : 0));
      }
    }
  }
  return {
    ticks: b.ticks,
    offsets: Int32Array.from({ length: ticks + 1 }, (_, t) => t * per * k),
    ids: Int32Array.from(ids),
    people: Float32Array.from(people),
  };
}
