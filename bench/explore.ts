/**
 * Explore section (issue #30 item 4): runs per hour of `occusim explore` on 30-minute
 * quickstart slices, and where a run's time goes (start-up, simulation, checks). The CLI is
 * run as users run it (`node bin/occusim.js`, compiled dist/) with the same seed twice: one
 * job in the main thread (the baseline) and `--jobs auto` worker threads, each given the
 * scenario loaded once. Also printed: CPU ms per run of the whole process, and the ceiling it
 * implies for the cores of this machine — wall figures on a shared machine are stretched by
 * everything else running, CPU time is not.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExploreReport } from '../src/explore/explore.js';

const TARGET_RUNS_PER_HOUR = 3000;

export function runExploreBench(root: string, runsArg?: string): Promise<void> {
  const runs = Number(runsArg ?? 16);
  console.log(
    `== explore: ${runs} runs of 30-minute quickstart slices, seed 11, every fault kind (node bin/occusim.js, dist/)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-explore-'));
  try {
    const one = explore(root, dir, runs, '1');
    line('--jobs 1 (baseline)', one, one);
    const auto = explore(root, dir, runs, 'auto');
    line(`--jobs auto (${auto.jobs} threads)`, auto, one);
    for (const r of [one, auto]) split(r);
    const cpuPerRun = auto.cpuMs / Math.max(1, auto.runs + 1);
    const ceiling = Math.round((availableParallelism() * 3_600_000) / cpuPerRun);
    console.log(
      `  CPU per run ${Math.round(cpuPerRun)} ms: at most ${ceiling.toLocaleString('en-US')} runs/hour on ${availableParallelism()} cores of our own (target ${TARGET_RUNS_PER_HOUR.toLocaleString('en-US')}); load average now ${loadAverage()}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return Promise.resolve();
}

function explore(root: string, dir: string, runs: number, jobs: string): ExploreReport {
  const out = join(dir, `jobs-${jobs}.json`);
  const r = spawnSync(
    process.execPath,
    [
      'bin/occusim.js',
      'explore',
      'quickstart',
      '--runs',
      String(runs),
      '--duration',
      '30m',
      '--seed',
      '11',
      '--jobs',
      jobs,
      '--report',
      out,
    ],
    { cwd: root, encoding: 'utf8' },
  );
  if (r.status !== 0)
    throw new Error(`occusim explore --jobs ${jobs} exited ${String(r.status)}: ${r.stdout}${r.stderr}`);
  return JSON.parse(readFileSync(out, 'utf8')) as ExploreReport;
}

function line(label: string, r: ExploreReport, base: ExploreReport): void {
  console.log(
    `  ${label.padEnd(30)} ${String(r.runsPerHour.toLocaleString('en-US')).padStart(7)} runs/hour  (${(r.wallMs / 1000).toFixed(1)} s, CPU ${(r.cpuMs / 1000).toFixed(1)} s)  ratio ${(r.runsPerHour / Math.max(1, base.runsPerHour)).toFixed(2)}`,
  );
}

/** Mean wall ms per run of each part, as the runs themselves measured it. */
function split(r: ExploreReport): void {
  const c = r.costs;
  const per = (ms: number): string => `${Math.round(ms / Math.max(1, c.measuredRuns))} ms`;
  console.log(
    `  cost split, jobs ${r.jobs}: start-up ${per(c.startupMs)}, simulation ${per(c.simulationMs)}, checks ${per(c.checksMs)}, whole run ${per(c.runWallMs)} (wall, per run)`,
  );
}

function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ')[0] ?? '?';
  } catch {
    return '?';
  }
}
