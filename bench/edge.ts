/**
 * Edge section: thermal frame synthesis + detection throughput.
 * - kernel: one sensor per resolution, bare single thread (the baseline), CPU time best of 7;
 * - pool: 64 sensors of 8×8 in 10 s batches (tasks sized as the stage sizes them: 32 sensors
 *   for 1 worker, 16 for 2) through the Piscina pool with 1 and 2 workers,
 *   and the same tasks in this thread (pool overhead = 1 − pool(1) / in-thread, wall time,
 *   interleaved best of 7; also the extra CPU per frame the pool costs), from the TypeScript
 *   sources and, when built, from dist/ (the compiled path the CLI runs);
 * - state bytes per sensor.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runBatch, type SensorBatch } from '../src/edge/frame/kernel.js';
import { seedState } from '../src/edge/frame/noise.js';
import type { FrameSpec } from '../src/edge/frame/spec.js';
import { stateBytes, stateViews } from '../src/edge/frame/state.js';
import { inThreadRunner, type FrameTask, type TaskRunner } from '../src/edge/frame/task.js';
import { sensorsPerTask } from '../src/edge/frame-stage.js';
import { poolRunner } from '../src/edge/pool/frame-pool.js';
import { SENSOR_MODELS } from '../src/scenario/model.js';

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

function spec(cols: number, rows: number, fps: number): FrameSpec {
  const side = 3.46;
  return {
    id: `bench-${cols}x${rows}`, mode: 0, cols, rows, side, fps, startMs: 0, reportIntervalMs: 1000, thresholdK: 0.6, netdK: 0.15,
    ambientC: 22, hvacAmplitudeK: 0.4, hvacPeriodMs: 1_200_000, personHeat: 1.5 / ((side / cols) * (side / rows)), absorbTauS: 14_400,
    door: [0, 0, 0, 0], inSign: 1, entrance: 0, heightM: 3, magnify: [1, 1, 1, 1, 1, 1], // parallax off, as in scenario runs (PARALLAX)
  };
}

/** `seconds` one-second ticks starting at `fromS`, one person walking a circle under the sensor. */
function batch(fromS: number, seconds: number): SensorBatch {
  const n = seconds + 1;
  const ticks = new Float64Array(n).map((_, i) => (fromS + i - 1) * 1000);
  const offsets = new Int32Array(n + 1).map((_, i) => i);
  const people = new Float32Array(n * 4);
  for (let i = 0; i < n; i++) people.set([1.73 + Math.cos((fromS + i) / 5), 1.73 + Math.sin((fromS + i) / 5), 0, 32], i * 4);
  return { ticks, offsets, ids: new Int32Array(n), people };
}

function newState(s: FrameSpec): ArrayBuffer {
  const st = stateViews(s.cols * s.rows);
  seedState(st.rng, [0.1, 0.2, 0.3, 0.4]);
  st.bg.fill(s.ambientC);
  return st.buffer;
}

/** CPU time of this process (all threads), seconds. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * Bare kernel frames/s per core for one resolution: CPU time of this thread's work (the
 * machine is shared: CPU time is not stretched by other processes holding the core), best of
 * 7 trials of ~`frames` / 7 frames each, after a warm-up.
 */
function kernel(cols: number, rows: number, frames: number): number {
  const s = spec(cols, rows, 10);
  const st = stateViews(cols * rows, newState(s));
  const seconds = Math.ceil(frames / s.fps / 7);
  runBatch(s, st, batch(0, 200)); // warm-up
  let best = 0;
  for (let trial = 0; trial < 7; trial++) {
    const b = batch(200 + trial * seconds, seconds);
    const c0 = cpuSeconds();
    runBatch(s, st, b);
    best = Math.max(best, (seconds * s.fps) / Math.max(1e-6, cpuSeconds() - c0));
  }
  return best;
}

interface Measure {
  /** Frames per wall-clock second. */
  wall: number;
  /** Frames per CPU second of the whole process (main thread and workers). */
  cpu: number;
}

/** 64 sensors of 8×8 at 10 fps, `rounds` drains of 10 s, grouped into tasks as the stage does for `workers`. */
async function throughRunner(runner: TaskRunner, rounds: number, workers: number): Promise<Measure> {
  const sensors = 64;
  const per = sensorsPerTask(sensors, workers);
  const specs = Array.from({ length: sensors }, () => spec(8, 8, 10));
  let states = specs.map(newState);
  const c0 = cpuSeconds();
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) {
    const tasks: FrameTask[] = [];
    for (let k = 0; k < sensors; k += per) tasks.push({ specs: specs.slice(k, k + per), states: states.slice(k, k + per), batches: specs.slice(k, k + per).map(() => batch(r * 10, 10)) });
    const results = await runner.run(tasks);
    states = results.flatMap((x) => x.states);
  }
  const frames = sensors * rounds * 100;
  return { wall: frames / ((performance.now() - t0) / 1000), cpu: frames / Math.max(1e-6, cpuSeconds() - c0) };
}

export async function runEdgeBench(): Promise<void> {
  console.log('== edge: thermal frame synthesis + detection');
  const base = kernel(8, 8, 700_000);
  for (const [name, { cols, rows }] of Object.entries(SENSOR_MODELS)) {
    const fps = name === 'tp-8x8' ? base : kernel(cols, rows, Math.max(40_000, 700_000 / ((cols * rows) / 64)));
    console.log(`  kernel ${name.padEnd(9)} ${fmt(fps).padStart(10)} frames/s per core (CPU time, best of 7)   ratio vs 8×8 ${(fps / base).toFixed(3)}`);
  }
  await comparePool('TypeScript sources (tsx, as here)', [inThreadRunner(), poolRunner(1), poolRunner(2)]);
  const dist = await distRunners();
  if (dist) await comparePool('compiled dist/ (what bin/occusim.js runs)', dist);
  else console.log('  (dist/ missing or older than src/edge: run `npm run build` to measure the compiled path too)');
  console.log(`  state per sensor: ${stateBytes(64)} bytes at 8×8, ${stateBytes(1024)} bytes at 32×32`);
}

/**
 * In-thread vs pool(1) vs pool(2), interleaved trials (in-thread, 1 worker, 2 workers,
 * in-thread, …), best of 7 each: the machine is shared, the best trial of each is the least
 * disturbed, and interleaving exposes all three to the same spells of load.
 */
async function comparePool(label: string, runners: TaskRunner[]): Promise<void> {
  const rounds = 20;
  const workers = [1, 1, 2]; // task sizing: the in-thread baseline groups as for one worker
  for (let i = 0; i < runners.length; i++) await throughRunner(runners[i] as TaskRunner, 5, workers[i] as number); // warm-up: threads, modules, JIT
  const wall = [0, 0, 0];
  const cpu = [0, 0, 0];
  for (let trial = 0; trial < 7; trial++) {
    for (let i = 0; i < runners.length; i++) {
      const m = await throughRunner(runners[i] as TaskRunner, rounds, workers[i] as number);
      wall[i] = Math.max(wall[i] as number, m.wall);
      cpu[i] = Math.max(cpu[i] as number, m.cpu);
    }
  }
  for (const r of runners) await r.close();
  const [inThread, p1, p2] = wall as [number, number, number];
  const [cIn, c1] = cpu as [number, number, number];
  console.log(`  pool, ${label}:`);
  console.log(`  8×8 × 64 sensors in this thread   ${fmt(inThread).padStart(10)} frames/s   baseline 1.00   (${fmt(cIn)} frames per CPU second)`);
  console.log(`  through the pool, 1 worker        ${fmt(p1).padStart(10)} frames/s   ratio ${(p1 / inThread).toFixed(3)} (overhead ${((1 - p1 / inThread) * 100).toFixed(1)} % wall; ${((cIn / c1 - 1) * 100).toFixed(1)} % more CPU per frame)`);
  console.log(`  through the pool, 2 workers       ${fmt(p2).padStart(10)} frames/s   ratio ${(p2 / inThread).toFixed(3)}; 2 vs 1 workers ×${(p2 / p1).toFixed(2)}`);
}

/** The compiled runners from dist/ when it is built and not older than the edge sources. */
async function distRunners(): Promise<TaskRunner[] | null> {
  const root = new URL('../', import.meta.url);
  const pool = new URL('dist/edge/pool/frame-pool.js', root);
  const task = new URL('dist/edge/frame/task.js', root);
  const newest = (dir: string): number => Math.max(...readdirSync(fileURLToPath(new URL(dir, root))).map((f) => statSync(fileURLToPath(new URL(`${dir}/${f}`, root))).mtimeMs));
  if (!existsSync(fileURLToPath(pool)) || statSync(fileURLToPath(pool)).mtimeMs < Math.max(newest('src/edge/frame'), newest('src/edge/pool'))) return null;
  const p = (await import(pool.href)) as { poolRunner: typeof poolRunner };
  const t = (await import(task.href)) as { inThreadRunner: typeof inThreadRunner };
  return [t.inThreadRunner(), p.poolRunner(1), p.poolRunner(2)];
}
