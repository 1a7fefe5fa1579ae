import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runBatch } from '../../src/edge/frame/kernel.js';
import { createScratch, FRAME_MAX_C, FRAME_MIN_C, synthesise } from '../../src/edge/frame/synth.js';
import { stateBytes } from '../../src/edge/frame/state.js';
import { lastDetections, rig, runTicks } from './frame-rig.js';

const SEED = { seed: 42 };

describe('frame synthesis and detection of a single person', () => {
  // Parallax (docs/edge.md): the sensor sees shoulders and head at 1.0–1.65 m, so a person r
  // metres off the optical axis appears (m − 1)·r farther out, m = H/(H − h) ≤ the head's
  // magnification, and only people whose shoulders are within the footprint at shoulder height
  // (side / m) are wholly in view. The bound is the detector's own error on top of that
  // geometric displacement, over positions wholly in view.
  for (const [model, bound, parallax] of [
    ['tp-32x32', 0.3, false],
    ['tp-8x8', 0.6, false],
    ['tp-32x32', 0.3, true],
    ['tp-8x8', 0.6, true],
  ] as const) {
    it(`locates one person within ${bound} m${parallax ? ' plus the parallax displacement' : ''} at ${model}, across heights, yaws and positions in view${parallax ? ' (parallax on)' : ''}`, () => {
      fc.assert(
        fc.property(
          fc.double({ min: 2.4, max: 4.6, noNaN: true }),
          fc.double({ min: 0, max: 360, noNaN: true }),
          fc.double({ min: 0.1, max: 0.9, noNaN: true }),
          fc.double({ min: 0.1, max: 0.9, noNaN: true }),
          fc.constantFrom('standing' as const, 'sitting' as const),
          (height, yaw, lx, ly, posture) => {
            const r = rig({ model, height, orientationDeg: yaw }, [], [], 1, parallax);
            const [ms, mh] =
              posture === 'sitting' ? [r.spec.magnify[2], r.spec.magnify[3]] : [r.spec.magnify[0], r.spec.magnify[1]];
            const [x, y] = r.view.toWorld(0.5 + (lx - 0.5) / ms, 0.5 + (ly - 0.5) / ms);
            runTicks(r, [[{ id: 1, x, y, posture }], [{ id: 1, x, y, posture }]]);
            const det = lastDetections(r);
            expect(det).toHaveLength(1);
            const [dx, dy] = det[0] as [number, number];
            const offAxis = Math.hypot(x - r.sensor.center[0], y - r.sensor.center[1]);
            expect(Math.hypot(dx - x, dy - y)).toBeLessThanOrEqual(bound + (mh - 1) * offAxis);
            // …and the displacement is outward, at least the shoulders' share of it.
            if (parallax) expect(ms).toBeGreaterThan(1.2);
            expect(Math.hypot(dx - r.sensor.center[0], dy - r.sensor.center[1])).toBeGreaterThanOrEqual(
              ms * offAxis - bound,
            );
          },
        ),
        { ...SEED, numRuns: 150 },
      );
    });
  }

  it('keeps an 8×8 sensor within 2 KB of state', () => {
    expect(stateBytes(64)).toBeLessThanOrEqual(2048);
  });
});

describe('frames of an empty room', () => {
  // Documented bound (docs/edge.md): fewer than 1 false detection per 10⁴ frames.
  for (const model of ['tp-8x8', 'tp-32x32'] as const) {
    it(`yield fewer than 10 false detections over 10⁵ frames at ${model}`, () => {
      // 1 fps and a report every second: every frame's detections are counted.
      const r = rig({ model, height: 3, fps: 1 });
      const seconds = 100_000;
      let falseDetections = 0;
      for (let done = 0; done < seconds; done += 1000) {
        const out = runTicks(
          r,
          Array.from({ length: Math.min(1000, seconds - done) }, () => []),
        );
        for (let i = 0; i < out.length; i += 2) falseDetections += out[i + 1] as number;
      }
      expect(falseDetections).toBeLessThan(10);
    });
  }
});

describe('synthesised frames', () => {
  it('never contain NaN or out-of-range temperatures, whatever the people', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('tp-8x8', 'tp-16x12', 'tp-32x24', 'tp-32x32'),
        fc.array(
          fc.tuple(
            fc.double({ min: -10, max: 10 }),
            fc.double({ min: -10, max: 10 }),
            fc.constantFrom(0, 1, 2),
            fc.double({ min: 25, max: 40, noNaN: true }),
          ),
          { maxLength: 30 },
        ),
        (model, people) => {
          const r = rig({ model });
          const sc = createScratch(r.spec.cols, r.spec.rows);
          const buf = Float32Array.from(people.flat());
          synthesise(r.spec, r.state, sc, 1_000_000, buf, people.length, 0.99);
          for (const v of sc.frame) {
            expect(Number.isFinite(v)).toBe(true);
            expect(v).toBeGreaterThanOrEqual(FRAME_MIN_C);
            expect(v).toBeLessThanOrEqual(FRAME_MAX_C);
          }
        },
      ),
      { ...SEED, numRuns: 60 },
    );
  });

  it('spread the heat of a person straddling pixels over those pixels (coverage, not centre sampling)', () => {
    const r = rig({ model: 'tp-8x8', height: 3 });
    const pw = r.spec.side / 8;
    // On the corner shared by four pixels: each gets about a quarter of the heat.
    const sc = createScratch(8, 8);
    r.state.fixed.fill(0);
    synthesise(
      { ...r.spec, netdK: 0, hvacAmplitudeK: 0 },
      r.state,
      sc,
      1_000_000,
      Float32Array.from([4 * pw, 4 * pw, 1, 32]),
      1,
      1,
    );
    const at = (i: number, j: number): number => (sc.frame[j * 8 + i] as number) - 22;
    const four = [at(3, 3), at(4, 3), at(3, 4), at(4, 4)];
    for (const v of four) expect(v).toBeCloseTo(four[0] as number, 5);
    expect(four[0]).toBeGreaterThan(0.5);
    expect(runBatch).toBeTypeOf('function');
  });
});
