/**
 * `npm run bench -- scale [sizes] [duration] [fidelities]`: fleets generated from
 * scenarios/fleet.yaml's templates (101 sensors a floor, 5 floors a building, 5 buildings a
 * site, the fleet's four time zones in turn) at 1k, 3k, 10k, 30k and 90k sensors by default
 * (a scenario expands to at most 250,000 items, rooms and doors included: ~225k sensors), each run
 * in a fresh `occusim run` process from dist/ (as users run it) at model and at frame (8×8,
 * `--workers 2`; `frame:tp-32x32` for fleet.yaml's own arrays) fidelity. Printed per run: start-up (to the first tick), the loop's
 * simulated sensor-seconds per wall second, peak RSS and bytes per sensor; then the growth
 * exponent of each against the fleet size, fitted by least squares on log–log (target ≤ 1.1;
 * on CPU time, which other processes on a shared machine do not stretch, and on wall time),
 * and the marginal exponent between the two largest fleets (where fixed costs no longer hide
 * the growth). Sizes: e.g. `1k,3k,10k,30k,100k`; duration: simulated, e.g. `30s`.
 * `scale probe [sizes]`: the simulator's side of a tick alone; `scale threads [sizes] [duration] [fidelity]`:
 * CPU per sensor-second by thread (scale-threads.ts); `scale alloc [sizes] [fidelity]`: the simulator's thread's
 * allocation per sensor-tick by site (scale-alloc.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readThreadLoop, THREAD_CPU_PRELOAD, type ThreadLoop } from './thread-cpu.js';

const SENSORS_PER_BUILDING = 505;
const BUILDINGS_PER_SITE = 5;
const ZONES = ['Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'];

interface Perf {
  wallMs: number;
  startupMs: number;
  loopMs: number;
  startupCpuMs: number;
  loopCpuMs: number;
  simulatedMs: number;
  peakRssMb: number;
  cpuPercent: number;
}

interface Row {
  fidelity: string;
  sensors: number;
  startupMs: number;
  loopMs: number;
  startupCpuMs: number;
  loopCpuMs: number;
  sensorSecondsPerS: number;
  sensorSecondsPerCpuS: number;
  peakRssMb: number;
  cpuPercent: number;
  load: number;
  /** Each thread's share of the loop's CPU (bench/thread-cpu.cjs). */
  threads: ThreadLoop[];
}

/**
 * fleet.yaml with its sites replaced by enough sites of its templates for ~`target` sensors,
 * its sensors of the `array` given (fleet.yaml leaves the scenario default, tp-32x32, which
 * only matters at frame fidelity: 16× the pixels of tp-8x8).
 */
export function fleetYaml(root: string, target: number, array?: string): { text: string; sensors: number } {
  const base = readFileSync(join(root, 'scenarios/fleet.yaml'), 'utf8');
  const defaults = 'sensor_defaults: { height: 3.5 }';
  if (array !== undefined && !base.includes(defaults))
    throw new Error(`bench: scenarios/fleet.yaml no longer has \`${defaults}\` to set the sensors' array in`);
  const withArray =
    array === undefined ? base : base.replace(defaults, `sensor_defaults: { height: 3.5, model: ${array} }`);
  const head = withArray.slice(0, withArray.indexOf('\nsites:'));
  const buildings = Math.max(1, Math.round(target / SENSORS_PER_BUILDING));
  const sites: string[] = [];
  for (let s = 0, left = buildings; left > 0; s++, left -= BUILDINGS_PER_SITE) {
    const count = Math.min(BUILDINGS_PER_SITE, left);
    sites.push(
      `  - name: "Site ${s + 1}"\n    timezone: ${ZONES[s % ZONES.length]}\n    buildings:\n      - { use: fleet-building, repeat: { count: ${count}, as: b, offset: [60, 0] }, name: "B\${b+1}" }`,
    );
  }
  return { text: `${head}\nsites:\n${sites.join('\n')}\n`, sensors: buildings * SENSORS_PER_BUILDING };
}

/**
 * A fidelity as the benches take it: `model`, `frame` (8×8 arrays, as issue 14 measures frame
 * fidelity) or `frame:<array>` (e.g. `frame:tp-32x32`, fleet.yaml's own sensors).
 */
export function fidelityOf(spec: string): { fidelity: string; array: string | undefined; label: string } {
  const [fidelity = spec, array] = spec.split(':');
  if (fidelity !== 'frame') return { fidelity, array: undefined, label: fidelity };
  const a = array ?? 'tp-8x8';
  return { fidelity, array: a, label: `frame ${a.replace(/^tp-/, '')}` };
}

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(k?)$/i.exec(s.trim());
  if (!m) throw new Error(`bench scale: size ${s} is not a number like 3000 or 3k`);
  return Number(m[1]) * (m[2] ? 1000 : 1);
}

function runOnce(
  root: string,
  file: string,
  duration: string,
  fidelity: string,
  dir: string,
): { perf: Perf; threads: ThreadLoop[] } {
  const report = join(dir, 'report.json');
  const threadDir = mkdtempSync(join(dir, 'threads-'));
  const args = [
    '-r',
    join(root, THREAD_CPU_PRELOAD),
    join(root, 'bin/occusim.js'),
    'run',
    file,
    '--duration',
    duration,
    '--quiet',
    '--fidelity',
    fidelity,
    '--report',
    report,
  ];
  if (fidelity === 'frame') args.push('--workers', '2');
  const r = spawnSync(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, OCCUSIM_THREAD_CPU_DIR: threadDir },
  });
  if (r.status !== 0) throw new Error(`occusim run ${file} --fidelity ${fidelity} exited ${r.status}`);
  const perf = (JSON.parse(readFileSync(report, 'utf8')) as { perf: Perf }).perf;
  return { perf, threads: readThreadLoop(threadDir, perf) };
}

/** µs of CPU per simulated sensor-second. */
const perSensorSecond = (ms: number, row: { sensors: number; simulatedMs: number }): number =>
  (1000 * ms) / ((row.sensors * row.simulatedMs) / 1000);

/** One line: each thread's loop CPU and GC pauses per simulated sensor-second. */
function formatThreads(threads: readonly ThreadLoop[], row: { sensors: number; simulatedMs: number }): string {
  const parts = threads.map(
    (t) =>
      `${t.role} ${perSensorSecond(t.cpuMs, row).toFixed(2)}${t.role === 'other' ? '' : ` (GC ${perSensorSecond(t.gcMs, row).toFixed(2)})`}`,
  );
  // GC pauses are wall time (a loaded machine stretches them); `other` is V8's helper threads (concurrent marking, compilers) and libuv's pool.
  return `      loop CPU per thread, µs per sensor-second (GC pauses, wall): ${parts.join(', ')}`;
}

/** Least-squares slope of log y against log x: y grows like x^slope. */
function exponent(xs: readonly number[], ys: readonly number[]): number {
  const lx = xs.map(Math.log);
  const ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b, 0) / lx.length;
  const my = ly.reduce((a, b) => a + b, 0) / ly.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < lx.length; i++) {
    num += ((lx[i] as number) - mx) * ((ly[i] as number) - my);
    den += ((lx[i] as number) - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

function printFit(rows: readonly Row[]): void {
  if (rows.length < 2) return;
  const n = rows.map((r) => r.sensors);
  const series: Array<[string, number[]]> = [
    ['start-up, CPU time', rows.map((r) => r.startupCpuMs)],
    ['loop, CPU time', rows.map((r) => r.loopCpuMs)],
    ['start-up, wall', rows.map((r) => r.startupMs)],
    ['loop, wall', rows.map((r) => r.loopMs)],
    ['peak RSS', rows.map((r) => r.peakRssMb)],
  ];
  const [a, b] = [rows[rows.length - 2] as Row, rows[rows.length - 1] as Row];
  for (const [name, ys] of series) {
    const y0 = ys[ys.length - 2] as number;
    const y1 = ys[ys.length - 1] as number;
    const marginal = Math.log(y1 / y0) / Math.log(b.sensors / a.sensors);
    console.log(
      `    growth exponent, ${name.padEnd(28)} fitted ${exponent(n, ys).toFixed(2)}   ${fmt(a.sensors)} → ${fmt(b.sensors)}: ${marginal.toFixed(2)}   (target ≤ 1.1)`,
    );
  }
  const threadExponents = b.threads.map((t) => {
    const before = a.threads.find((x) => x.role === t.role);
    return before === undefined || before.cpuMs <= 0
      ? null
      : `${t.role} ${(Math.log(t.cpuMs / before.cpuMs) / Math.log(b.sensors / a.sensors)).toFixed(2)}`;
  });
  if (threadExponents.some((e) => e !== null))
    console.log(
      `    growth exponent, loop CPU per thread, ${fmt(a.sensors)} → ${fmt(b.sensors)}: ${threadExponents.filter((e) => e !== null).join(', ')}`,
    );
  const perSensor = ((b.peakRssMb - a.peakRssMb) * 1e6) / (b.sensors - a.sensors);
  console.log(`    memory per added sensor (${fmt(a.sensors)} → ${fmt(b.sensors)}): ${fmt(perSensor)} bytes`);
}

export async function runScaleBench(
  root: string,
  sizesArg = '1k,3k,10k,30k,90k',
  duration = '30s',
  fidelitiesArg = 'model,frame',
  threadsFidelity?: string,
): Promise<void> {
  if (sizesArg === 'probe') return runLoopProbe(root, duration === '30s' ? '10k,30k,90k' : duration);
  // Imported when asked for: scale-threads.ts imports this module's fleetYaml.
  if (sizesArg === 'alloc')
    return (await import('./scale-alloc.js')).runAllocProbe(
      root,
      duration === '30s' ? undefined : duration,
      fidelitiesArg === 'model,frame' ? undefined : fidelitiesArg,
    );
  if (sizesArg === 'threads')
    return (await import('./scale-threads.js')).runThreadsBench(
      root,
      duration === '30s' ? undefined : duration,
      fidelitiesArg === 'model,frame' ? undefined : fidelitiesArg,
      threadsFidelity,
    );
  const sizes = sizesArg.split(',').map(parseSize);
  const fidelities = fidelitiesArg.split(',');
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-scale-'));
  try {
    console.log(
      `\n== scale: fleets from fleet.yaml's templates, --duration ${duration}, each run in its own process from dist/ (load average at start ${loadavg()[0]?.toFixed(1)})`,
    );
    console.log(
      '  fidelity      sensors   start-up wall (CPU)   loop wall (CPU)     sensor-s per wall s (per CPU s)   peak RSS   bytes/sensor   CPU   load',
    );
    for (const spec of fidelities) {
      const { fidelity, array, label } = fidelityOf(spec);
      const rows: Row[] = [];
      for (const target of sizes) {
        const { text, sensors } = fleetYaml(root, target, array);
        const file = join(dir, `fleet-${sensors}.yaml`);
        writeFileSync(file, text);
        const load = loadavg()[0] ?? 0;
        const { perf: p, threads } = runOnce(root, file, duration, fidelity, dir);
        const row: Row = {
          fidelity: label,
          sensors,
          startupMs: p.startupMs,
          loopMs: p.loopMs,
          startupCpuMs: p.startupCpuMs,
          loopCpuMs: p.loopCpuMs,
          sensorSecondsPerS: (sensors * p.simulatedMs) / Math.max(1, p.loopMs),
          sensorSecondsPerCpuS: (sensors * p.simulatedMs) / Math.max(1, p.loopCpuMs),
          peakRssMb: p.peakRssMb,
          cpuPercent: p.cpuPercent,
          load,
          threads,
        };
        rows.push(row);
        const sec = (ms: number): string => (ms / 1000).toFixed(1);
        console.log(
          `  ${label.padEnd(11)} ${fmt(sensors).padStart(9)}   ${sec(p.startupMs).padStart(6)} s (${sec(p.startupCpuMs).padStart(5)} s)   ${sec(p.loopMs).padStart(6)} s (${sec(p.loopCpuMs).padStart(5)} s)   ${fmt(row.sensorSecondsPerS).padStart(14)} (${fmt(row.sensorSecondsPerCpuS).padStart(8)})       ${fmt(p.peakRssMb).padStart(6)} MB  ${fmt((p.peakRssMb * 1e6) / sensors).padStart(12)}  ${String(p.cpuPercent).padStart(3)} %  ${load.toFixed(1)}`,
        );
        if (threads.length > 0) console.log(formatThreads(threads, { sensors, simulatedMs: p.simulatedMs }));
      }
      printFit(rows);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await Promise.resolve();
}

/**
 * `npm run bench -- scale probe [sizes]`: the simulator's side of a tick alone — world, truth
 * recorder and the model-fidelity edge, drained every batch interval; no platform, hives or
 * threads — in CPU µs per sensor-tick, after 30 warm-up ticks, over 60 ticks, each fleet in its
 * own process from dist/: the edge stage as a run has it (accuracy wrapper included), its
 * packets buffered to the drain without the wrapper (flat, as the run's: edge-packets.ts), and the sensors alone (packets dropped
 * at once). The first two differ by the wrapper; exponents between sizes show what grows
 * faster than the fleet.
 */
async function runLoopProbe(root: string, sizesArg: string): Promise<void> {
  const sizes = sizesArg.split(',').map(parseSize);
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-probe-'));
  try {
    console.log(
      `\n== scale probe: world + truth + model edge per tick, CPU µs per sensor-tick (30 warm-up ticks, then 60), each fleet in its own process from dist/ (load average at start ${loadavg()[0]?.toFixed(1)})`,
    );
    console.log('    sensors   with accuracy   packets buffered   sensors alone   wrapper   load');
    const rows: Array<{ sensors: number; withAcc: number; buffered: number; alone: number }> = [];
    for (const target of sizes) {
      const { text, sensors } = fleetYaml(root, target);
      const file = join(dir, `fleet-${sensors}.yaml`);
      writeFileSync(file, text);
      const load = loadavg()[0] ?? 0;
      const [withAcc = 0, buffered = 0, alone = 0] = (['accuracy', 'buffered', 'sensors'] as const).map((mode) =>
        probeOnce(root, file, mode, sensors),
      );
      rows.push({ sensors, withAcc, buffered, alone });
      console.log(
        `  ${fmt(sensors).padStart(9)}   ${withAcc.toFixed(2).padStart(13)}   ${buffered.toFixed(2).padStart(16)}   ${alone.toFixed(2).padStart(13)}   ${(withAcc - buffered).toFixed(2).padStart(7)}   ${load.toFixed(1)}`,
      );
    }
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [rows[i - 1]!, rows[i]!];
      const e = (y0: number, y1: number): string =>
        (Math.log((y1 * b.sensors) / (y0 * a.sensors)) / Math.log(b.sensors / a.sensors)).toFixed(2);
      console.log(
        `    growth exponent of the tick's CPU time ${fmt(a.sensors)} → ${fmt(b.sensors)}: with accuracy ${e(a.withAcc, b.withAcc)}, packets buffered ${e(a.buffered, b.buffered)}, sensors alone ${e(a.alone, b.alone)}   (target ≤ 1.1)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const EDGES = {
  accuracy: 'createEdgeStage(model)',
  buffered: '{ observe: (s, w) => sensors.sampleInto(s, w, buffer), drain: async () => buffer.take() }',
  sensors: '{ observe: (s, w) => void sensors.sample(s, w), drain: async () => [] }',
};

/** One probe process: CPU µs per sensor-tick of ticks 30–90 (drains included). */
function probeOnce(root: string, file: string, mode: 'accuracy' | 'buffered' | 'sensors', sensors: number): number {
  const dist = (m: string): string =>
    JSON.stringify(new URL(`../dist/${m}`, `file://${root.endsWith('/') ? root : `${root}/`}bench/`).href);
  const script = `
    import { readFileSync } from 'node:fs';
    const { loadScenarioText } = await import(${dist('scenario/load.js')});
    const { createWorld } = await import(${dist('sim/world.js')});
    const { createTruthRecorder } = await import(${dist('sim/truth.js')});
    const { createEdgeStage, createModelSensors } = await import(${dist('edge/sensors.js')});
    const { EdgePacketWriter } = await import(${dist('edge/edge-packets.js')});
    const { model } = loadScenarioText(readFileSync(${JSON.stringify(file)}, 'utf8'), ${JSON.stringify(file)}, { fidelity: 'model', durationMs: 120000 });
    const world = createWorld(model);
    const truth = createTruthRecorder(model);
    const sensors = createModelSensors(model);
    const buffer = new EdgePacketWriter();
    const edge = ${EDGES[mode]};
    let cpu = 0;
    for (let k = 0, t = model.startMs; k < 90; k++, t += model.tickMs) {
      if (k === 30) cpu = process.cpuUsage().user + process.cpuUsage().system;
      const step = world.step(t);
      truth.observe(step, world);
      edge.observe(step, world);
      if ((t + model.tickMs - model.startMs) % model.batchIntervalMs === 0) await edge.drain();
    }
    const u = process.cpuUsage();
    console.log(String((u.user + u.system - cpu) / 60 / ${sensors}));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(`bench scale probe: ${file} (${mode}) exited ${r.status}: ${r.stderr}`);
  return Number(r.stdout.trim());
}
