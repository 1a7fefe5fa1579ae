/**
 * `npm run bench -- capacity [--duration 5m] [--fidelities model,frame] [--start 10k]
 * [--step 5k] [--max 200k] [--no-profile]`: the largest fleet that holds real time, per
 * fidelity: `model`, `frame` (8×8 arrays, issue 14's target) or `frame:<array>` (e.g.
 * `frame:tp-32x32`, fleet.yaml's own sensors; no target).
 *
 * Fleets come from scenarios/fleet.yaml's templates as in the scale bench (`fleetYaml`), each
 * run in a fresh `occusim run … --speed 1` process from dist/ for `--duration` of simulated
 * (= wall) time. A fleet holds real time when the run's tick lag (`perf.realTime.lagMs`, wall
 * ms a tick started after it was due — the hive's batching is not in it) has p99 < 2 s and
 * nothing was lost. The search doubles the fleet from `--start` while it holds, then bisects
 * between the largest fleet that held and the smallest that did not until they are `--step`
 * apart. A run is stopped (SIGINT: it still writes its report) as soon as it cannot pass any
 * more: the run warns on stderr with its lag while more than 2 s behind, and lag falls by at
 * most one tick per tick, so a lag of L means at least (L − 2 s) / tick more ticks behind —
 * beyond 1 % of the run's ticks, p99 is lost.
 *
 * Printed per run besides the lag: sensing → stored p99, and the loop's wait at a delivery for
 * an earlier one (`perf.realTime.deliveryWaitMs`, p99: how much of the lag the hand-off to the
 * hives and the platform causes).
 *
 * Every run is profiled (`node --cpu-prof`, 10 ms samples, one profile per thread whatever the
 * thread layout); for each run the busiest threads' shares over the loop (start-up excluded)
 * are printed, and for a fleet that fell behind, which limit it reached first (capacity-profile.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { formatShares, limitOf, readProfiles, type ThreadShare } from './capacity-profile.js';
import { fidelityOf, fleetYaml } from './scale.js';

/** The targets on the 2-core machine (issue 14). */
const TARGETS: Record<string, number> = { model: 100_000, frame: 50_000 };
/** A tick this late fails it; p99 of the ticks must stay under (issue 14). */
const LAG_LIMIT_MS = 2_000;
/** fleet.yaml's tick (the scenario default): lag can fall by at most this much a tick. */
const TICK_MS = 1_000;
/** After SIGINT a run finishes its deliveries and writes its report; past this it is killed. */
const STOP_GRACE_MS = 180_000;

interface Options {
  durationMs: number;
  duration: string;
  fidelities: string[];
  start: number;
  step: number;
  max: number;
  profile: boolean;
}

interface RealTime {
  lagMs: { p50: number; p99: number; max: number };
  sensingToStoredMs: { p50: number; p99: number; max: number };
  /** The loop's wait, at each delivery, for an earlier one (reports before 2026-11-25 lack it). */
  deliveryWaitMs?: { p50: number; p99: number; max: number };
  ticksBehind: number;
}

interface Report {
  result: { messages: { lost: number } };
  perf: {
    wallMs: number;
    startupMs: number;
    loopMs: number;
    loopCpuMs: number;
    peakRssMb: number;
    cpuPercent: number;
    interrupted: boolean;
    realTime?: RealTime;
  };
}

interface Trial {
  sensors: number;
  held: boolean;
  verdict: string;
  report: Report | null;
  threads: ThreadShare[];
  load: number;
}

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(k?)$/i.exec(s.trim());
  if (!m) throw new Error(`bench capacity: ${s} is not a fleet size like 30000 or 30k`);
  return Math.round(Number(m[1]) * (m[2] ? 1000 : 1));
}

function parseDurationMs(s: string): number {
  const m = /^(\d+)(s|m)$/.exec(s);
  if (!m) throw new Error(`bench capacity: --duration ${s} is not like 30s or 5m`);
  return Number(m[1]) * (m[2] === 'm' ? 60_000 : 1000);
}

export function capacityOptions(args: readonly string[]): Options {
  const o: Options = {
    durationMs: 300_000,
    duration: '5m',
    fidelities: ['model', 'frame'],
    start: 10_000,
    step: 5_000,
    max: 200_000,
    profile: true,
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i] as string;
    if (flag === '--no-profile') {
      o.profile = false;
      continue;
    }
    const value = args[++i];
    if (value === undefined) throw new Error(`bench capacity: ${flag} needs a value`);
    if (flag === '--duration') [o.duration, o.durationMs] = [value, parseDurationMs(value)];
    else if (flag === '--fidelities') o.fidelities = value.split(',');
    else if (flag === '--start') o.start = parseSize(value);
    else if (flag === '--step') o.step = parseSize(value);
    else if (flag === '--max') o.max = parseSize(value);
    else
      throw new Error(
        `bench capacity: unknown option ${flag} (--duration, --fidelities, --start, --step, --max, --no-profile)`,
      );
  }
  return o;
}

/** Ticks over the limit that p99 (nearest rank) tolerates in a run of `ticks`. */
const toleratedBehind = (ticks: number): number => ticks - Math.ceil(0.99 * ticks);

/** One `occusim run --speed 1` of a fleet of ~`target` sensors, stopped once it cannot pass. */
async function trial(root: string, dir: string, target: number, spec: string, o: Options): Promise<Trial> {
  const { fidelity, array } = fidelityOf(spec);
  const { text, sensors } = fleetYaml(root, target, array);
  const runDir = mkdtempSync(join(dir, `${fidelity}-${sensors}-`));
  const file = join(runDir, 'fleet.yaml');
  const reportFile = join(runDir, 'report.json');
  const profDir = join(runDir, 'prof');
  mkdirSync(profDir);
  writeFileSync(file, text);
  const prof = o.profile ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '10000'] : [];
  const args = [
    ...prof,
    join(root, 'bin/occusim.js'),
    'run',
    file,
    '--speed',
    '1',
    '--duration',
    o.duration,
    '--quiet',
    '--fidelity',
    fidelity,
    '--report',
    reportFile,
  ];
  if (fidelity === 'frame') args.push('--workers', '2');
  const load = loadavg()[0] ?? 0;
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stopped: string | null = null;
  let stderrTail = '';
  let killTimer: NodeJS.Timeout | undefined;
  const allowed = toleratedBehind(Math.round(o.durationMs / TICK_MS));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-4000);
    for (const m of chunk.matchAll(/behind real time \(×[\d.]+\) by ([\d.]+) s at sim (\S+Z)/g)) {
      const lagMs = Number(m[1]) * 1000;
      if (stopped === null && Math.ceil((lagMs - LAG_LIMIT_MS) / TICK_MS) > allowed) {
        stopped = `stopped at sim ${m[2]}, ${m[1]} s behind`;
        child.kill('SIGINT');
        killTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      }
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killTimer);
  const report = existsSync(reportFile) ? (JSON.parse(readFileSync(reportFile, 'utf8')) as Report) : null;
  const threads = o.profile && report ? readProfiles(profDir, report.perf.wallMs - report.perf.startupMs) : [];
  rmSync(runDir, { recursive: true, force: true });
  const lag = report?.perf.realTime?.lagMs;
  // Not the exit code: a scenario's own failed expectation (exit 1) says nothing about keeping up.
  const held =
    report !== null &&
    !report.perf.interrupted &&
    lag !== undefined &&
    lag.p99 < LAG_LIMIT_MS &&
    report.result.messages.lost === 0;
  let verdict = held ? 'holds' : 'behind';
  if (stopped !== null) verdict = `behind (${stopped})`;
  else if (report === null)
    verdict = /heap out of memory|Allocation failed/i.test(stderrTail)
      ? 'out of memory'
      : `failed (exit ${code}): ${stderrTail.trim().split('\n').pop() ?? ''}`;
  else if (!held && report.result.messages.lost > 0) verdict = `lost ${report.result.messages.lost} packets`;
  return { sensors, held, verdict, report, threads, load };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const sec = (ms: number | undefined): string => (ms === undefined ? '—' : (ms / 1000).toFixed(2));

function printTrial(t: Trial): void {
  const p = t.report?.perf;
  const lag = p?.realTime?.lagMs;
  const stored = p?.realTime?.sensingToStoredMs;
  const waited = p?.realTime?.deliveryWaitMs;
  const loopCpu = p ? `${Math.round((100 * p.loopCpuMs) / Math.max(1, p.loopMs))} %` : '—';
  const rss = p ? `${fmt(p.peakRssMb)} MB` : '—';
  const perSensor = p ? fmt((p.peakRssMb * 1e6) / t.sensors) : '—';
  console.log(
    `  ${fmt(t.sensors).padStart(9)}  ${sec(lag?.p50).padStart(6)} ${sec(lag?.p99).padStart(6)} ${sec(lag?.max).padStart(7)}  ${sec(stored?.p99).padStart(7)}  ${sec(waited?.p99).padStart(8)}  ${loopCpu.padStart(5)}  ${rss.padStart(9)}  ${perSensor.padStart(8)}  ${t.load.toFixed(1).padStart(4)}  ${t.verdict}`,
  );
  for (const line of formatShares(t.threads.slice(0, 3))) console.log(line);
  if (!t.held && p)
    console.log(
      `      limit reached: ${limitOf(t.threads, { cpuPercent: p.cpuPercent, peakRssMb: p.peakRssMb, totalMemMb: totalmem() / 1e6, outOfMemory: false, load: t.load, cores: cpus().length })}`,
    );
  if (!t.held && !p && t.verdict === 'out of memory') console.log(`      limit reached: memory (the run died of it)`);
}

/** Doubling from `start` while a fleet holds, then bisection down to `step`: the largest fleet that held. */
async function search(root: string, dir: string, fidelity: string, o: Options): Promise<Trial | null> {
  let best: Trial | null = null;
  let failed = Number.POSITIVE_INFINITY;
  const tried = new Set<number>();
  let target = o.start;
  for (;;) {
    const size = fleetYaml(root, target).sensors; // the array does not change the count
    if (tried.has(size)) break;
    tried.add(size);
    const t = await trial(root, dir, target, fidelity, o);
    printTrial(t);
    if (t.held) best = t;
    else failed = Math.min(failed, t.sensors);
    const lo = best?.sensors ?? 0;
    if (failed === Number.POSITIVE_INFINITY) {
      if (size >= o.max) break;
      target = Math.min(o.max, size * 2);
    } else {
      if (failed - lo <= o.step) break;
      target = Math.round((lo + failed) / 2);
    }
  }
  return best;
}

export async function runCapacityBench(root: string, args: readonly string[]): Promise<void> {
  const o = capacityOptions(args);
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-capacity-'));
  const found = new Map<string, Trial | null>();
  try {
    console.log(
      `\n== capacity: the largest fleet from fleet.yaml's templates that holds --speed 1 for ${o.duration} (tick lag p99 < 2 s, 0 lost), each run in its own process from dist/ (load average at start ${loadavg()[0]?.toFixed(1)})`,
    );
    for (const fidelity of o.fidelities) {
      const { label } = fidelityOf(fidelity);
      console.log(
        `\n  ${label}${label === 'model' ? '' : ' (--workers 2)'}: doubling from ${fmt(o.start)}, then bisection to ${fmt(o.step)}`,
      );
      console.log(
        '    sensors   lag p50    p99     max  stored p99  wait p99  loop CPU  peak RSS  bytes/sensor  load  verdict',
      );
      found.set(fidelity, await search(root, dir, fidelity, o));
    }
    console.log('\n  largest fleet holding real time:');
    for (const [spec, best] of found) {
      const target = TARGETS[spec];
      const fidelity = fidelityOf(spec).label;
      const verdict =
        target === undefined
          ? ''
          : (best?.sensors ?? 0) >= target
            ? `target ≥ ${fmt(target)}: met`
            : `target ≥ ${fmt(target)}: not met`;
      console.log(
        `    ${fidelity.padEnd(12)} ${best ? fmt(best.sensors).padStart(9) : '     none'} sensors   ${verdict}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
