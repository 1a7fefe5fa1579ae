/**
 * `npx tsx bench/sim-interleave.ts [copies×size …]` (e.g. `1x30k 3x30k 1x100k`): is the main
 * thread's rise in CPU per sensor from 30k to 100k sensors the fleet's size in the code (maps,
 * sorts, scans whose cost per item depends on the fleet) or the size of its working set (caches)?
 *
 * Each spec runs in its own process from dist/ (`npm run build` first): `copies` independent
 * simulators of the same generated fleet (bench/scale.ts's `fleetYaml`; each its own scenario
 * load, world, truth recorder and model edge stage with the accuracy wrapper: the run's main
 * thread without the hand-off), stepped tick by tick in turn, drained every batch interval.
 * CPU µs per sensor-tick over ticks 30–90 (after 30 warm-up ticks), as `scale probe` measures.
 * Three 30k copies hold a ~90k fleet's working set, but every map, sort and per-floor list in
 * them is a 30k fleet's: if 3×30k costs per sensor what 1×100k costs, the rise is the memory
 * hierarchy; if it costs what 1×30k costs, it is in the code. Also prints each run's GC pauses
 * over the measured ticks. `MODE=sensors`: the model sensors alone right after the world step
 * (no truth recorder, no accuracy wrapper). `ROUNDS`, `TICKS` and `NODE_FLAGS` (e.g. `--single-threaded-gc`,
 * `--max-semi-space-size=64`) from the environment.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fleetYaml } from './scale.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
interface Run {
  us: number;
  heapMb: number;
  heapEndMb: number;
  /** GC pauses over the measured ticks: scavenges and mark-compacts, count and wall µs per sensor-tick. */
  gc: { minor: number; minorUs: number; major: number; majorUs: number };
}

const parseSize = (s: string): number => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1);

/** One process: `copies` simulators of `file`, interleaved; prints CPU µs per sensor-tick. */
function runSpec(file: string, copies: number, sensors: number, ticks: number): Run {
  const dist = (m: string): string => JSON.stringify(new URL(`dist/${m}`, `file://${root}/`).href);
  const script = `
    import { readFileSync } from 'node:fs';
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    const { loadScenarioText } = await import(${dist('scenario/load.js')});
    const { createWorld } = await import(${dist('sim/world.js')});
    const { createTruthRecorder } = await import(${dist('sim/truth.js')});
    const { createEdgeStage, createModelSensors } = await import(${dist('edge/sensors.js')});
    const { EdgePacketWriter } = await import(${dist('edge/edge-packets.js')});
    // MODE=sensors: no truth recorder and no accuracy wrapper, the sensors right after the world step.
    const sensorsOnly = ${JSON.stringify(process.env.MODE === 'sensors')};
    const bare = (model) => {
      const sensors = createModelSensors(model);
      const buffer = new EdgePacketWriter();
      return { observe: (s, w) => sensors.sampleInto(s, w, buffer), drain: async () => buffer.take() };
    };
    const text = readFileSync(${JSON.stringify(file)}, 'utf8');
    const sims = [];
    for (let c = 0; c < ${copies}; c++) {
      const { model } = loadScenarioText(text, ${JSON.stringify(file)}, { fidelity: 'model', durationMs: 3600000 });
      sims.push({ model, world: createWorld(model), truth: sensorsOnly ? null : createTruthRecorder(model), edge: sensorsOnly ? bare(model) : createEdgeStage(model) });
    }
    const { startMs, tickMs, batchIntervalMs } = sims[0].model;
    globalThis.gc();
    const heapMb = process.memoryUsage().heapUsed / 1e6;
    let cpu = 0;
    // GC pauses of the measured ticks (wall ms, this thread's): scavenges and mark-compacts.
    const gc = { minor: 0, minorMs: 0, major: 0, majorMs: 0, on: false };
    new PerformanceObserver((list) => {
      if (!gc.on) return;
      for (const e of list.getEntries()) {
        if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) { gc.minor++; gc.minorMs += e.duration; }
        else if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) { gc.major++; gc.majorMs += e.duration; }
      }
    }).observe({ entryTypes: ['gc'] });
    for (let k = 0, t = startMs; k < 30 + ${ticks}; k++, t += tickMs) {
      if (k === 30) { const u = process.cpuUsage(); cpu = u.user + u.system; gc.on = true; }
      for (const s of sims) {
        const step = s.world.step(t);
        s.truth?.observe(step, s.world);
        s.edge.observe(step, s.world);
      }
      if ((t + tickMs - startMs) % batchIntervalMs === 0) for (const s of sims) (await s.edge.drain()).release?.();
    }
    const u = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 50));
    gc.on = false;
    globalThis.gc();
    console.log(JSON.stringify({ us: (u.user + u.system - cpu) / ${ticks} / ${copies * sensors}, heapMb, heapEndMb: process.memoryUsage().heapUsed / 1e6, gc: { minor: gc.minor, minorUs: (gc.minorMs * 1000) / ${ticks} / ${copies * sensors}, major: gc.major, majorUs: (gc.majorMs * 1000) / ${ticks} / ${copies * sensors} } }));
  `;
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', ...(process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean), '--input-type=module', '-e', script],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (r.status !== 0) throw new Error(`sim-interleave: ${copies}×${file} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as Run;
}

const specs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['1x30k', '3x30k', '1x100k'];
const rounds = Number(process.env.ROUNDS ?? 2);
const ticks = Number(process.env.TICKS ?? 60);
const dir = mkdtempSync(join(tmpdir(), 'occusim-sim-interleave-'));
try {
  console.log(
    `== sim-interleave: world + truth + model edge (accuracy wrapper in), CPU µs per sensor-tick over ${ticks} ticks after 30, ${rounds} rounds (load average at start ${loadavg()[0]?.toFixed(1)})${process.env.MODE === 'sensors' ? ', MODE=sensors (no truth, no accuracy wrapper)' : ''}${process.env.NODE_FLAGS ? `, node ${process.env.NODE_FLAGS}` : ''}`,
  );
  const parsed = specs.map((s) => {
    const [c, size] = s.split('x');
    const { text, sensors } = fleetYaml(root, parseSize(size ?? '30k'));
    const file = join(dir, `fleet-${sensors}.yaml`);
    writeFileSync(file, text);
    return { spec: s, copies: Number(c), sensors, file, us: [] as number[], heap: [0, 0], gc: [] as Run['gc'][] };
  });
  for (let r = 0; r < rounds; r++) {
    for (const p of parsed) {
      const r = runSpec(p.file, p.copies, p.sensors, ticks);
      p.us.push(r.us);
      p.heap = [r.heapMb, r.heapEndMb];
      p.gc.push(r.gc);
    }
  }
  for (const p of parsed) {
    const best = Math.min(...p.us);
    const n = p.copies * p.sensors;
    console.log(
      `  ${p.spec.padEnd(8)} ${n.toLocaleString('en-US').padStart(9)} sensors   ${p.us.map((u) => u.toFixed(3)).join('  ')}   (min ${best.toFixed(3)})   heap after set-up ${p.heap[0]?.toFixed(0)} MB (${Math.round(((p.heap[0] ?? 0) * 1e6) / n)} B a sensor), at the end ${p.heap[1]?.toFixed(0)} MB`,
    );
    console.log(
      `           GC pauses per run (scavenges / µs per sensor-tick, mark-compacts / µs): ${p.gc.map((g) => `${g.minor} / ${g.minorUs.toFixed(3)}, ${g.major} / ${g.majorUs.toFixed(3)}`).join('; ')}`,
    );
  }
  console.log(`  load average at end ${loadavg()[0]?.toFixed(1)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
