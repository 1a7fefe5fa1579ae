import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SensorBatch } from '../../src/edge/frame/kernel.js';
import { FrameRecorder } from '../../src/edge/frame/recorder.js';
import { PERSON_STRIDE } from '../../src/edge/frame/synth.js';

const SEED = 20261125;

/** One person as recorded: id and PERSON_STRIDE floats. */
type Person = [number, number, number, number, number];
/** intervals → ticks → sensors → people. */
type Record = Person[][][][];

/**
 * The batches as per-sensor arrays gave them (the frame stage before the recorder): ticks with
 * the previous interval's last tick in front (the first interval: its first tick's people, one
 * millisecond before it), offsets from the batch's first person.
 */
function reference(rec: Record, sensors: number): SensorBatch[][] {
  const prev: Array<{ t: number; people: Person[] } | null> = Array.from({ length: sensors }, () => null);
  let t = 1_000;
  return rec.map((interval) => {
    const ticks = interval.map(() => (t += 1000));
    return Array.from({ length: sensors }, (_, s) => {
      const perTick = interval.map((tick) => tick[s] ?? []);
      const before = prev[s] ?? { t: (ticks[0] as number) - 1, people: perTick[0] ?? [] };
      const all = [before.people, ...perTick];
      const offsets = [0];
      for (const p of all) offsets.push((offsets[offsets.length - 1] as number) + p.length);
      const flat = all.flat();
      prev[s] = { t: ticks[ticks.length - 1] as number, people: perTick[perTick.length - 1] ?? [] };
      return {
        ticks: Float64Array.from([before.t, ...ticks]),
        offsets: Int32Array.from(offsets),
        ids: Int32Array.from(flat.map((p) => p[0])),
        people: Float32Array.from(flat.flatMap((p) => p.slice(1))),
      };
    });
  });
}

function recorded(rec: Record, sensors: number): SensorBatch[][] {
  const r = new FrameRecorder(sensors);
  let t = 1_000;
  return rec.map((interval) => {
    for (const tick of interval) {
      r.tick((t += 1000));
      // Sensors recorded in reverse, as floors may list them in another order than their indices.
      for (let s = sensors - 1; s >= 0; s--) {
        r.begin(s);
        for (const p of tick[s] ?? []) r.add(...p);
        r.end();
      }
    }
    const batches = Array.from({ length: sensors }, (_, s) => {
      const n = r.batchPeople(s);
      const b: SensorBatch = {
        ticks: new Float64Array(r.ticks + 1),
        offsets: new Int32Array(r.ticks + 2),
        ids: new Int32Array(n),
        people: new Float32Array(n * PERSON_STRIDE),
      };
      r.writeBatch(s, b.ticks, 0, b.offsets, 0, b.ids, 0, b.people, 0);
      return b;
    });
    r.endInterval();
    return batches;
  });
}

describe('the frame recorder', () => {
  it(`gives every sensor the batch its own arrays gave, interval after interval, its stores reused and grown (fast-check seed ${SEED})`, () => {
    const person = fc.tuple(
      fc.nat(50),
      fc.float({ noNaN: true, min: -10, max: 10 }),
      fc.float({ noNaN: true, min: -10, max: 10 }),
      fc.constantFrom(0, 1, 2),
      fc.float({ noNaN: true, min: 30, max: 34 }),
    ) as fc.Arbitrary<Person>;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }).chain((sensors) =>
          fc.tuple(
            fc.constant(sensors),
            fc.array(
              fc.array(fc.array(fc.array(person, { maxLength: 60 }), { minLength: sensors, maxLength: sensors }), {
                minLength: 1,
                maxLength: 20,
              }),
              { minLength: 1, maxLength: 4 },
            ),
          ),
        ),
        ([sensors, rec]) => {
          const toPlain = (bs: SensorBatch[][]): unknown =>
            bs.map((i) =>
              i.map((b) => [Array.from(b.ticks), Array.from(b.offsets), Array.from(b.ids), Array.from(b.people)]),
            );
          expect(toPlain(recorded(rec, sensors))).toEqual(toPlain(reference(rec, sensors)));
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });
});
