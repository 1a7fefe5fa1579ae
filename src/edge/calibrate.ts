import type { ScenarioModel } from '../scenario/model.js';
import { createWorld } from '../sim/world.js';
import type { DetectorAccuracy } from './accuracy.js';
import { createEdgeStage } from './sensors.js';

/**
 * The edge alone against ground truth: the world and the sensors of a scenario run over its
 * duration, without hives, broker or cloud, and the detector's accuracy is returned. Used to
 * calibrate the model-fidelity error model against the frame detector (docs/sensor-model.md)
 * quickly and without sockets; the figures are the same as a full run's `result.detector`.
 */
export async function edgeAccuracy(model: ScenarioModel, workers = 0): Promise<DetectorAccuracy> {
  const edge = createEdgeStage(model, { workers });
  const world = createWorld(model);
  const endMs = model.startMs + model.durationMs;
  try {
    let t = model.startMs;
    for (; t < endMs; t += model.tickMs) {
      edge.observe(world.step(t), world);
      // Only the accuracy is wanted: each interval's buffer goes straight back to the edge's writer.
      if ((t + model.tickMs - model.startMs) % model.batchIntervalMs === 0) (await edge.drain()).release();
    }
    (await edge.drain()).release();
    const acc = edge.accuracy?.();
    if (!acc) throw new Error('the edge stage measures no accuracy');
    return acc;
  } finally {
    await edge.close();
  }
}
