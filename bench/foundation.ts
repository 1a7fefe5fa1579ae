/**
 * Foundation section: quickstart at model fidelity.
 * - kernel: world + sensors only (no broker, no cloud): the baseline;
 * - end-to-end: the same scenario through hives, MQTT (embedded Aedes over TCP), cloud ingest
 *   and the SQLite store, in lockstep;
 * - fleet: parse + expand + validate of scenarios/fleet.yaml, time and heap.
 */
import { join } from 'node:path';
import { createModelSensors } from '../src/edge/sensors.js';
import { runScenario } from '../src/run/run-scenario.js';
import { loadScenarioFile } from '../src/scenario/load.js';
import type { ScenarioModel } from '../src/scenario/model.js';
import { createTruthRecorder } from '../src/sim/truth.js';
import { createWorld } from '../src/sim/world.js';

function load(file: string): ScenarioModel {
  const r = loadScenarioFile(file);
  if (!r.ok) throw new Error(`${file} does not load`);
  return r.model;
}

/** Sensor-seconds simulated per wall second, world + edge only. */
function kernel(model: ScenarioModel): { sensorSecondsPerS: number; wallMs: number; packets: number } {
  const t0 = performance.now();
  const world = createWorld(model);
  const truth = createTruthRecorder(model);
  const edge = createModelSensors(model);
  let packets = 0;
  for (let t = model.startMs; t < model.startMs + model.durationMs; t += model.tickMs) {
    const step = world.step(t);
    truth.observe(step, world);
    packets += edge.sample(step, world).length;
  }
  const wallMs = performance.now() - t0;
  return { sensorSecondsPerS: (model.sensors.length * model.durationMs) / wallMs, wallMs, packets };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

export async function runFoundationBench(root: string): Promise<void> {
  const quickstart = join(root, 'scenarios/quickstart.yaml');
  const model = load(quickstart);
  kernel(model); // warm-up: JIT and module loading out of the measured run
  const k = kernel(model);
  const e2e = await runScenario(quickstart, {});
  const e2eRate = e2e.perf.sensorSecondsPerWallSecond;

  const heap0 = process.memoryUsage().heapUsed;
  const f0 = performance.now();
  const fleet = load(join(root, 'scenarios/fleet.yaml'));
  const fleetMs = performance.now() - f0;
  const fleetHeapMb = (process.memoryUsage().heapUsed - heap0) / 1e6;

  console.log('== foundation: quickstart at model fidelity');
  console.log(
    `  sensors ${model.sensors.length}, simulated ${model.durationMs / 3_600_000} h, ${fmt(k.packets)} packets`,
  );
  console.log(
    `  kernel (world + sensors)      ${fmt(k.sensorSecondsPerS).padStart(12)} sensor-s/s   (${k.wallMs.toFixed(0)} ms)  baseline 1.00`,
  );
  console.log(
    `  end to end (MQTT + cloud)     ${fmt(e2eRate).padStart(12)} sensor-s/s   (${e2e.perf.wallMs} ms)  ratio ${(e2eRate / k.sensorSecondsPerS).toFixed(3)}`,
  );
  console.log(
    `  end to end speed-up vs real time: ×${fmt(e2e.perf.speedup)}; batches ${fmt(e2e.result.messages.batchesSent)}`,
  );
  console.log('== foundation: fleet scenario load (parse + expand + validate)');
  console.log(
    `  ${fmt(fleet.sensors.length)} sensors, ${fmt(fleet.floors.length)} floors: ${fleetMs.toFixed(0)} ms, heap +${fleetHeapMb.toFixed(0)} MB, rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`,
  );
}
