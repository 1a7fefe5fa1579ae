import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HiveBatcher } from '../../src/hive/batcher.js';
import type { WirePacket } from '../../src/proto/messages.js';

const traffic = (i: number): WirePacket => ({ kind: 'traffic', sensorMac: `00-17-0d-00-00-00-00-${(i % 256).toString(16).padStart(2, '0')}`, sensedAtMs: i, intervalMs: 1000, in: i, out: 0 });

describe('hive batcher', () => {
  it('returns no batch (and spends no seq) when nothing is queued', () => {
    const b = new HiveBatcher({ hiveSerial: 'HV1' });
    expect(b.takeBatches(1000)).toEqual([]);
    expect(b.nextSeq).toBe(1);
  });

  it('puts queued packets into one batch with seq 1 and sentAtMs = now', () => {
    const b = new HiveBatcher({ hiveSerial: 'HV1' });
    b.enqueue(traffic(1));
    b.enqueue(traffic(2));
    expect(b.takeBatches(5000)).toEqual([{ hiveSerial: 'HV1', seq: 1, sentAtMs: 5000, packets: [traffic(1), traffic(2)] }]);
    expect(b.nextSeq).toBe(2);
    expect(b.takeBatches(6000)).toEqual([]);
  });

  it('splits at maxPacketsPerBatch (default 500) with consecutive seqs', () => {
    const b = new HiveBatcher({ hiveSerial: 'HV1' });
    for (let i = 0; i < 1001; i++) b.enqueue(traffic(i));
    const batches = b.takeBatches(0);
    expect(batches.map((x) => [x.seq, x.packets.length])).toEqual([[1, 500], [2, 500], [3, 1]]);
  });

  it('rejects a non-positive batch size and an invalid serial', () => {
    expect(() => new HiveBatcher({ hiveSerial: 'HV1', maxPacketsPerBatch: 0 })).toThrow(/maxPacketsPerBatch/);
    expect(() => new HiveBatcher({ hiveSerial: 'HV/1' })).toThrow(/serial/);
  });

  it('emits every enqueued packet exactly once, in order, with seqs contiguous from 1 (fast-check seed 42)', () => {
    // rounds: how many packets to enqueue before each take
    const prop = fc.property(fc.integer({ min: 1, max: 7 }), fc.array(fc.nat({ max: 30 }), { maxLength: 12 }), (max, rounds) => {
      const b = new HiveBatcher({ hiveSerial: 'HV1', maxPacketsPerBatch: max });
      const out = [];
      let next = 0;
      for (const [r, count] of rounds.entries()) {
        for (let i = 0; i < count; i++) b.enqueue(traffic(next++));
        out.push(...b.takeBatches(r * 1000));
      }
      expect(out.flatMap((x) => x.packets)).toEqual(Array.from({ length: next }, (_, i) => traffic(i)));
      expect(out.map((x) => x.seq)).toEqual(out.map((_, i) => i + 1));
      for (const x of out) expect(x.packets.length).toBeGreaterThanOrEqual(1);
      for (const x of out) expect(x.packets.length).toBeLessThanOrEqual(max);
      expect(b.nextSeq).toBe(out.length + 1);
    });
    fc.assert(prop, { seed: 42, numRuns: 200 });
  });
});
