/**
 * `npm run bench -- platform [duration]`: fleet.yaml (30,300 sensors, model fidelity, 10
 * simulated minutes by default) in one thread (the baseline: platform and hives in the run's
 * thread) and in the default layout (platform in its own worker thread, hives in hive threads,
 * world and edge in the run's thread), each in a fresh `occusim run` process from dist/ (as
 * users run it): wall time, CPU utilisation of the process (200 % = both cores), peak RSS, and
 * the ratio of wall times, and each run's start-up per phase (perf.startup). The two runs'
 * `result` sections must be byte-identical.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PhaseTime } from '../src/run/perf.js';
import type { RunPerf, StartupBreakdown } from '../src/run/run-report.js';

interface Run {
  mode: string;
  wallMs: number;
  cpuPercent: number;
  peakRssMb: number;
  loadMs: number;
  startupMs: number;
  startupCpuMs: number;
  startup: StartupBreakdown | null;
  hiveThreads: number;
  result: string;
}

/** The baseline pins every thread option to one thread; the default layout is what `occusim run` picks (auto). */
const LAYOUTS = {
  single: ['--platform-thread', 'off', '--hive-threads', '0'],
  threads: ['--platform-thread', 'auto', '--hive-threads', 'auto'],
} as const;

function runOnce(root: string, scenario: string, duration: string, mode: keyof typeof LAYOUTS, dir: string): Run {
  const report = join(dir, `${mode}.json`);
  const r = spawnSync(
    process.execPath,
    [
      join(root, 'bin/occusim.js'),
      'run',
      scenario,
      '--duration',
      duration,
      '--quiet',
      ...LAYOUTS[mode],
      '--report',
      report,
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (r.status !== 0) throw new Error(`occusim run (${LAYOUTS[mode].join(' ')}) exited ${r.status}`);
  const { result, perf } = JSON.parse(readFileSync(report, 'utf8')) as { result: unknown; perf: RunPerf };
  return {
    mode,
    wallMs: perf.wallMs,
    cpuPercent: perf.cpuPercent,
    peakRssMb: perf.peakRssMb,
    loadMs: perf.loadMs,
    startupMs: perf.startupMs,
    startupCpuMs: perf.startupCpuMs,
    startup: perf.startup ?? null,
    hiveThreads: perf.hiveThreads,
    result: JSON.stringify(result),
  };
}

export async function runPlatformBench(root: string, duration = '10m'): Promise<void> {
  const scenario = join(root, 'scenarios/fleet.yaml');
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-platform-'));
  try {
    console.log(
      `\nplatform thread: fleet.yaml, --duration ${duration}, model fidelity (each run in its own process from dist/)`,
    );
    const base = runOnce(root, scenario, duration, 'single', dir);
    const own = runOnce(root, scenario, duration, 'threads', dir);
    for (const r of [base, own]) {
      const label =
        r.mode === 'single'
          ? 'one thread (platform and hives in the run thread)   '
          : `platform thread + ${r.hiveThreads} hive thread(s) + run thread`;
      console.log(
        `  ${label}  wall ${(r.wallMs / 1000).toFixed(1)} s  CPU ${r.cpuPercent} %  peak RSS ${r.peakRssMb} MB  (load ${(r.loadMs / 1000).toFixed(1)} s)`,
      );
    }
    // The start-up is the serial stretch of a threaded run: where it went, per phase (perf.startup).
    for (const r of [base, own])
      console.log(`  start-up, ${r.mode === 'single' ? 'one thread' : 'threads   '}: ${startupLine(r)}`);
    console.log(`  load average (1 min) at the end: ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores`);
    console.log(
      `  wall time threads / one thread: x${(own.wallMs / base.wallMs).toFixed(2)} (target <= 0.6); CPU ${own.cpuPercent} % (target >= 170 %)`,
    );
    console.log(`  results byte-identical: ${own.result === base.result}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await Promise.resolve();
}

function startupLine(r: Run): string {
  const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const total = `${sec(r.startupMs)} wall, ${sec(r.startupCpuMs)} CPU`;
  const s = r.startup;
  if (!s) return total;
  const phase = (name: string, p: PhaseTime): string => `${name} ${sec(p.wallMs)} (${sec(p.cpuMs)} CPU)`;
  const steps = s.steps.map((step) => phase(step.name, step));
  return `${total} = ${[phase('load', s.load), ...steps].join(' + ')}; platform up at ${sec(s.platformUpMs)}`;
}
