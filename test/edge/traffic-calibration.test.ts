import { describe, expect, it } from 'vitest';
import { edgeAccuracy } from '../../src/edge/calibrate.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { Fidelity, ScenarioModel, SensorModelName } from '../../src/scenario/model.js';

const FIXTURE = new URL('./fixtures/door-calibration.yaml', import.meta.url).pathname;
/** Stated tolerance (docs/sensor-model.md): model recall within 4 points of the frame detector's. */
const RECALL_TOLERANCE = 0.04;

function calibrationModel(fidelity: Fidelity, array: SensorModelName): ScenarioModel {
  const loaded = loadScenarioFile(FIXTURE, { fidelity });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
  return { ...loaded.model, sensors: loaded.model.sensors.map((s) => ({ ...s, model: array })) };
}

describe('traffic error model at model fidelity, calibrated per array against the frame detector', () => {
  for (const array of ['tp-8x8', 'tp-16x12', 'tp-32x24', 'tp-32x32'] as const) {
    it(`keeps ${array} recall within ${RECALL_TOLERANCE} of the frame detector's on a busy door`, async () => {
      const frame = (await edgeAccuracy(calibrationModel('frame', array))).traffic.overall;
      const model = (await edgeAccuracy(calibrationModel('model', array))).traffic.overall;
      expect(frame.trueCrossings).toBeGreaterThan(800);
      expect(model.trueCrossings).toBe(frame.trueCrossings);
      expect(Math.abs(model.recall - frame.recall)).toBeLessThanOrEqual(RECALL_TOLERANCE);
      expect(Math.abs(model.precision - frame.precision)).toBeLessThanOrEqual(0.01);
    });
  }

  it('shows the 8×8 array missing clearly more crossings than 32×32 at both fidelities', async () => {
    for (const fidelity of ['frame', 'model'] as const) {
      const low = (await edgeAccuracy(calibrationModel(fidelity, 'tp-8x8'))).traffic.overall.recall;
      const high = (await edgeAccuracy(calibrationModel(fidelity, 'tp-32x32'))).traffic.overall.recall;
      expect(high - low).toBeGreaterThan(0.1);
    }
  });
});
