/**
 * `npm run bench -- scale threads [sizes] [duration] [fidelity]`: which thread's CPU per sensor-second
 * grows with the fleet. Each fleet (scale.ts's `fleetYaml`, model fidelity or `frame` — 8×8
 * arrays, `--workers 2`, as the scale bench runs it —, the default thread layout) runs at `--speed max` in its own `occusim run` process from dist/ with
 * `node --cpu-prof` (one profile per thread) and the `bench/thread-cpu.cjs` preload (the one the
 * scale bench uses), which records every thread's own CPU time (Linux /proc) twice a second. Over the loop's steady part
 * — from its first delivery to its last (`OCCUSIM_LOOP_TRACE` lines), start-up and the final
 * drain excluded — it prints per thread: CPU µs per sensor-second, the garbage collector's
 * share of its profile, and its busiest functions in CPU µs per sensor-second (profile share ×
 * the thread's CPU); then each thread's growth exponent between consecutive sizes. CPU time,
 * not the profiles' sampled wall time, so a loaded machine does not stretch the figures.
 * "V8 helpers" is the process's CPU less its JavaScript threads' (concurrent marking and
 * sweeping, parallel scavenges, libuv). Under each thread, its isolate's collections over the
 * same window from V8's own trace (`--trace-gc --trace-incremental-marking`, bench/gc-trace.ts):
 * mark-compacts by what started them and the heap they marked per sensor-second — the work
 * behind most of "V8 helpers". `OCCUSIM_BENCH_KEEP=1` keeps the runs' directory (profiles, series,
 * reports) and prints its path.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fidelityOf, fleetYaml } from './scale.js';
import { describeGc, GcTrace, type IsolateGc } from './gc-trace.js';
import { at, readRecorded } from './thread-cpu.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Thread {
  name: string;
  cpuUs: number;
  gcShare: number;
  top: Array<[string, number]>;
  gc: IsolateGc | null;
}

const parseSize = (s: string): number => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

export async function runThreadsBench(
  root: string,
  sizesArg = '30k,100k',
  duration = '1m',
  fidelitySpec = 'model',
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-threads-'));
  const fid = fidelityOf(fidelitySpec);
  try {
    console.log(
      `\n== scale threads: CPU per sensor-second by thread over the loop's steady part, --duration ${duration}, --speed max, ${fid.label} fidelity (load average at start ${loadavg()[0]?.toFixed(1)})`,
    );
    const rows: Array<{ sensors: number; threads: Thread[] }> = [];
    for (const target of sizesArg.split(',').map(parseSize)) {
      const { text, sensors } = fleetYaml(root, target, fid.array);
      const run = join(dir, String(sensors));
      mkdirSync(run);
      writeFileSync(join(run, 'fleet.yaml'), text);
      const loads: number[] = [];
      const timer = setInterval(() => loads.push(loadavg()[0] ?? 0), 5000);
      loads.push(loadavg()[0] ?? 0);
      const trace = await runOnce(root, run, duration, fid.fidelity);
      clearInterval(timer);
      const threads = threadsOf(run, trace, sensors);
      rows.push({ sensors, threads });
      console.log(
        `  ${fmt(sensors)} sensors, ${trace.simS} simulated s measured, load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}:`,
      );
      for (const t of threads) {
        console.log(
          `    ${t.name.padEnd(16)} ${t.cpuUs.toFixed(2).padStart(6)} µs CPU per sensor-s${t.gcShare >= 0 ? `, GC ${Math.round(100 * t.gcShare)} %` : ''}`,
        );
        for (const [fn, us] of t.top) console.log(`        ${us.toFixed(3).padStart(6)}  ${fn}`);
        if (t.gc) console.log(`        GC: ${describeGc(t.gc, sensors * trace.simS)}`);
      }
    }
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [rows[i - 1]!, rows[i]!];
      const e = (x: number, y: number): string => (1 + Math.log(y / x) / Math.log(b.sensors / a.sensors)).toFixed(2);
      const parts = b.threads.map((t) => {
        const before = a.threads.find((u) => u.name === t.name);
        return before ? `${t.name} ${e(before.cpuUs, t.cpuUs)}` : null;
      });
      console.log(
        `    growth exponent of CPU time ${fmt(a.sensors)} → ${fmt(b.sensors)}: ${parts.filter((p) => p !== null).join(', ')}   (target ≤ 1.1)`,
      );
    }
  } finally {
    if (process.env.OCCUSIM_BENCH_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(dir);
  }
}

/** The loop's steady part: wall times and sim instants of its first and last delivery. */
interface Trace {
  fromWall: number;
  toWall: number;
  simS: number;
  gc: GcTrace;
}

async function runOnce(root: string, run: string, duration: string, fidelity: string): Promise<Trace> {
  const args = [
    '-r',
    join(root, 'bench/thread-cpu.cjs'),
    '--trace-gc',
    '--trace-incremental-marking',
    '--cpu-prof',
    '--cpu-prof-dir',
    run,
    '--cpu-prof-interval',
    '2000',
    join(root, 'bin/occusim.js'),
    'run',
    join(run, 'fleet.yaml'),
    '--duration',
    duration,
    '--speed',
    'max',
    '--quiet',
    '--report',
    join(run, 'report.json'),
  ];
  if (fidelity !== 'model') args.push('--fidelity', fidelity, '--workers', '2');
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OCCUSIM_THREAD_CPU_DIR: run, OCCUSIM_LOOP_TRACE: '1' },
  });
  const deliveries: Array<{ wall: number; at: number }> = [];
  const gc = new GcTrace();
  createInterface({ input: child.stdout }).on('line', (line) => {
    // V8's own lines without an isolate prefix (incremental marking's steps) are dropped too.
    if (!gc.line(line) && !line.startsWith('[IncrementalMarking]')) process.stdout.write(`${line}\n`);
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    const at = /^loop-trace at=(\d+)/.exec(line);
    if (at) deliveries.push({ wall: Date.now(), at: Number(at[1]) });
    else if (!line.startsWith('hive-trace')) process.stderr.write(`${line}\n`);
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`bench scale threads: occusim run ${run} exited ${code}`);
  const [first, last] = [deliveries[0], deliveries[deliveries.length - 1]];
  if (!first || !last || last.at <= first.at)
    throw new Error('bench scale threads: the run made fewer than two deliveries (give a longer duration)');
  return { fromWall: first.wall, toWall: last.wall, simS: (last.at - first.at) / 1000, gc };
}

function threadsOf(run: string, trace: Trace, sensors: number): Thread[] {
  const sensorS = sensors * trace.simS;
  // Per thread id: [wall, own CPU ms, GC ms, process CPU ms] samples in time order.
  const recorded = readRecorded(run);
  const samples = new Map(recorded.map((r) => [String(r.threadId), r.series]));
  const gc = trace.gc.byThread(recorded, trace.fromWall, trace.toWall);
  const cpuMs = (id: string, k: 1 | 3): number =>
    at(samples.get(id) ?? [], trace.toWall, k) - at(samples.get(id) ?? [], trace.fromWall, k);
  const loopMs = (JSON.parse(readFileSync(join(run, 'report.json'), 'utf8')) as { perf: { loopMs: number } }).perf
    .loopMs;
  const threads: Thread[] = [];
  let js = 0;
  for (const file of readdirSync(run).filter((f) => f.endsWith('.cpuprofile'))) {
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile
    const id = file.split('.')[4] ?? '';
    const profiled = profileOf(join(run, file), loopMs, id === '0');
    const { gcShare, shares } = profiled;
    const name = profiled.name === 'frame worker' ? `frame worker ${id}` : profiled.name;
    // A frame worker blocks in Atomics.wait between tasks, where the preload's timer never fires:
    // its CPU series stays empty, so its profile's busy time (wall, sampled) stands in.
    const series = cpuMs(id, 1);
    const cpu = series > 0 ? series : profiled.busyMs;
    if (series > 0) js += cpu;
    const top = shares.slice(0, 6).map(([fn, share]): [string, number] => [fn, (share * cpu * 1000) / sensorS]);
    threads.push({
      name: series > 0 ? name : `${name} (busy wall)`,
      cpuUs: (cpu * 1000) / sensorS,
      gcShare,
      top,
      gc: gc.get(Number(id)) ?? null,
    });
  }
  threads.push({ name: 'V8 helpers', cpuUs: ((cpuMs('0', 3) - js) * 1000) / sensorS, gcShare: -1, top: [], gc: null });
  threads.push({ name: 'process', cpuUs: (cpuMs('0', 3) * 1000) / sensorS, gcShare: -1, top: [], gc: null });
  return threads;
}

/** A thread's role (from where its time went), GC share and functions' shares of its busy time over the loop. */
function profileOf(
  file: string,
  loopMs: number,
  main: boolean,
): { name: string; gcShare: number; shares: Array<[string, number]>; busyMs: number } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    endTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const from = p.endTime - loopMs * 1000;
  const byFn = new Map<string, number>();
  let t = p.startTime;
  let busy = 0;
  let hive = 0;
  let cloud = 0;
  let kernel = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const d = p.timeDeltas[i] ?? 0;
    t += d;
    const f = frames.get(p.samples[i] ?? -1);
    if (t < from || !f || f.functionName === '(idle)' || f.functionName === 'atomicsWaitLoop') continue;
    busy += d;
    const fn = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '')}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + d);
    if (/\/dist\/(hive|mesh)\//.test(f.url)) hive += d;
    if (/\/dist\/cloud\/|better-sqlite3/.test(f.url)) cloud += d;
    if (/\/dist\/edge\/frame\//.test(f.url)) kernel += d;
  }
  // A frame worker (piscina) runs the frame kernel and nothing of the hive or the platform.
  const name = main ? 'main (sim+edge)' : kernel > hive + cloud ? 'frame worker' : hive > cloud ? 'hive' : 'platform';
  const shares = [...byFn].map(([fn, v]): [string, number] => [fn, v / Math.max(1, busy)]).sort((a, b) => b[1] - a[1]);
  return { name, gcShare: (byFn.get('(garbage collector) ') ?? 0) / Math.max(1, busy), shares, busyMs: busy / 1000 };
}
