/**
 * `npx tsx bench/thread-parts.ts [sizes] [duration]` (default `30k,100k 1m`): where the main
 * and hive threads' CPU per sensor-second goes, by part of the code, at each fleet size — to
 * name what grows. Each fleet (bench/scale.ts's `fleetYaml`, model fidelity, the default
 * layout) runs at `--speed max` in its own `occusim run` from dist/ (`npm run build` first) with
 * `node --cpu-prof` and the bench/thread-cpu.cjs preload. A thread's CPU over the loop (start-up
 * and the report excluded: `perf.startupMs`/`loopMs` on the preload's clock) is split by its
 * profile's self time over the same window, grouped by source module into parts (`PARTS`), in
 * CPU µs per simulated sensor-second; then each part's ratio between the last size and the first.
 * `NODE_FLAGS` (e.g. `--single-threaded-gc`) go to each run's node. (`scale threads` prints single functions, which move between sizes as V8 inlines differently,
 * and its profile window reaches into the report written after the loop.)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fleetYaml } from './scale.js';
import { readRecorded, readThreadLoop } from './thread-cpu.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const parseSize = (s: string): number => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1);

/** Parts of each thread by the module a sampled function is in (first match wins). */
const PARTS: Record<string, Array<[string, RegExp]>> = {
  main: [
    ['GC', /^\(garbage collector\)/],
    [
      'presence/traffic sampling (model sensors, streams, rooms)',
      /edge\/(model-presence|model-traffic|sensors|room-people)|core\/rng|seedrandom/,
    ],
    ['accuracy wrapper (truth per report, scoring, footprints)', /edge\/(accuracy|greedy-match)|core\/footprint/],
    ['world + truth', /\/sim\//],
    ['hand-off to the hive thread', /hive\/hive-threads|edge\/edge-packets|postMessage/],
  ],
  hive: [
    ['GC', /^\(garbage collector\)/],
    ['meshes (walk, link streams, arrivals)', /mesh\/|core\/rng|seedrandom/],
    ['hive group (submit, health, flush)', /hive\/(hive-group|packet-transfer|hive-worker|hive-node)/],
    ['uplink and heartbeat encoding', /proto\/|protobufjs|codec/],
    ['MQTT client, buffers, sockets', /mqtt|buffer|writev|Buffer|debug|events|stream/],
  ],
};

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface Profile {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self-time shares of each part in `p` between `from` and `to` (profile µs). */
function partShares(p: Profile, parts: Array<[string, RegExp]>, from: number, to: number): Map<string, number> {
  const fn = new Map(p.nodes.map((n) => [n.id, `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url}`]));
  const by = new Map<string, number>();
  let busy = 0;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < from || t > to) continue;
    const f = fn.get(p.samples[i] ?? -1) ?? '';
    if (/^\(idle\)|^atomicsWaitLoop/.test(f)) continue;
    const d = p.timeDeltas[i + 1] ?? 0;
    busy += d;
    const part = parts.find(([, re]) => re.test(f))?.[0] ?? 'other';
    by.set(part, (by.get(part) ?? 0) + d);
  }
  for (const [k, v] of by) by.set(k, v / Math.max(1, busy));
  return by;
}

async function runOnce(dir: string, duration: string): Promise<number> {
  const args = [
    ...(process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean),
    '-r',
    join(root, 'bench/thread-cpu.cjs'),
    '--cpu-prof',
    '--cpu-prof-dir',
    dir,
    '--cpu-prof-interval',
    '500',
    join(root, 'bin/occusim.js'),
    'run',
    join(dir, 'fleet.yaml'),
    '--duration',
    duration,
    '--speed',
    'max',
    '--quiet',
    '--report',
    join(dir, 'report.json'),
  ];
  const spawned = Date.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, OCCUSIM_THREAD_CPU_DIR: dir },
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`thread-parts: occusim run in ${dir} exited ${code}`);
  return spawned;
}

const sizes = (process.argv[2] ?? '30k,100k').split(',').map(parseSize);
const duration = process.argv[3] ?? '1m';
const base = mkdtempSync(join(tmpdir(), 'occusim-thread-parts-'));
try {
  console.log(
    `== thread-parts: CPU µs per sensor-second by part, main and hive threads, --duration ${duration}, model fidelity (load average at start ${loadavg()[0]?.toFixed(1)})${process.env.NODE_FLAGS ? `, node ${process.env.NODE_FLAGS}` : ''}`,
  );
  const rows: Array<{ sensors: number; threads: Map<string, { cpu: number; parts: Map<string, number> }> }> = [];
  for (const target of sizes) {
    const { text, sensors } = fleetYaml(root, target);
    const dir = join(base, String(sensors));
    mkdirSync(dir);
    writeFileSync(join(dir, 'fleet.yaml'), text);
    const spawned = await runOnce(dir, duration);
    const perf = (
      JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as {
        perf: { startupMs: number; loopMs: number; loopCpuMs: number; simulatedMs: number };
      }
    ).perf;
    const sensorS = (sensors * perf.simulatedMs) / 1000;
    const recorded = readRecorded(dir);
    const wall0 = recorded.find((r) => r.role === 'main')?.wall0 ?? spawned;
    const loop = readThreadLoop(dir, perf);
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
    const profileOf = (threadId: number): Profile | null => {
      const f = files.find((x) => x.split('.')[4] === String(threadId));
      return f ? (JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile) : null;
    };
    const main = profileOf(0);
    if (!main) throw new Error('thread-parts: no profile of the main thread');
    // The profiles' clock starts with the process (~ the spawn); the preload's wall0 is on the epoch.
    const from = main.startTime + (wall0 - spawned + perf.startupMs) * 1000;
    const to = from + perf.loopMs * 1000;
    const threads = new Map<string, { cpu: number; parts: Map<string, number> }>();
    // V8's helper threads (concurrent marking, parallel scavenges) and the whole process, for the GC's share outside the JavaScript threads.
    const other = loop.find((t) => t.role === 'other')?.cpuMs ?? 0;
    threads.set('V8 helpers', { cpu: (other * 1000) / sensorS, parts: new Map() });
    threads.set('process', { cpu: (perf.loopCpuMs * 1000) / sensorS, parts: new Map() });
    for (const role of ['main', 'hive'] as const) {
      const cpuMs = loop.find((t) => t.role === role)?.cpuMs ?? 0;
      const rec = recorded.find((r) => r.role === role);
      const p = rec ? profileOf(rec.threadId) : null;
      if (!p) continue;
      const shares = partShares(p, PARTS[role] ?? [], from, to);
      const cpu = (cpuMs * 1000) / sensorS;
      threads.set(role, { cpu, parts: new Map([...shares].map(([k, s]) => [k, s * cpu])) });
    }
    rows.push({ sensors, threads });
    console.log(
      `  ${sensors.toLocaleString('en-US')} sensors: loop ${(perf.loopMs / 1000).toFixed(1)} s wall, load ${loadavg()[0]?.toFixed(1)}`,
    );
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (first && last) {
    for (const role of ['V8 helpers', 'process']) {
      const vals = rows.map((r) => r.threads.get(role)?.cpu ?? 0);
      console.log(
        `  ${role}, µs CPU per sensor-s: ${vals.map((v) => v.toFixed(3)).join(' → ')}   (${((vals[vals.length - 1] ?? 0) / Math.max(1e-9, vals[0] ?? 0)).toFixed(2)})`,
      );
    }
    for (const role of ['main', 'hive']) {
      console.log(
        `  ${role} thread, µs CPU per sensor-s: ${rows.map((r) => r.sensors.toLocaleString('en-US')).join(' → ')}   (ratio)`,
      );
      const names = [...(PARTS[role] ?? []).map(([n]) => n), 'other'];
      const a = first.threads.get(role);
      const b = last.threads.get(role);
      for (const n of names) {
        const vals = rows.map((r) => r.threads.get(role)?.parts.get(n) ?? 0);
        const ratio = (vals[vals.length - 1] ?? 0) / Math.max(1e-9, vals[0] ?? 0);
        console.log(`    ${n.padEnd(58)} ${vals.map((v) => v.toFixed(3)).join(' → ')}   (${ratio.toFixed(2)})`);
      }
      if (a && b)
        console.log(
          `    ${'whole thread'.padEnd(58)} ${rows.map((r) => (r.threads.get(role)?.cpu ?? 0).toFixed(3)).join(' → ')}   (${(b.cpu / a.cpu).toFixed(2)}; exponent ${(1 + Math.log(b.cpu / a.cpu) / Math.log(last.sensors / first.sensors)).toFixed(2)})`,
        );
    }
  }
} finally {
  if (process.env.KEEP) console.log(`  kept ${base}`);
  else rmSync(base, { recursive: true, force: true });
}
