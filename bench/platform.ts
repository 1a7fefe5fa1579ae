/**
 * `npm run bench -- platform [duration]`: fleet.yaml (30,300 sensors, model fidelity, 10
 * simulated minutes by default) with the platform in the run's thread (the baseline) and in
 * its own worker thread, each in a fresh `occusim run` process from dist/ (as users run it):
 * wall time, CPU utilisation of the process (200 % = both cores), peak RSS, and the ratio of
 * wall times. The two runs' `result` sections must be byte-identical.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Run {
  mode: string;
  wallMs: number;
  cpuPercent: number;
  peakRssMb: number;
  loadMs: number;
  result: string;
}

function runOnce(root: string, scenario: string, duration: string, mode: 'off' | 'on', dir: string): Run {
  const report = join(dir, `${mode}.json`);
  const r = spawnSync(process.execPath, [join(root, 'bin/occusim.js'), 'run', scenario, '--duration', duration, '--quiet', '--platform-thread', mode, '--report', report], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`occusim run (--platform-thread ${mode}) exited ${r.status}`);
  const { result, perf } = JSON.parse(readFileSync(report, 'utf8')) as { result: unknown; perf: { wallMs: number; cpuPercent: number; peakRssMb: number; loadMs: number } };
  return { mode, wallMs: perf.wallMs, cpuPercent: perf.cpuPercent, peakRssMb: perf.peakRssMb, loadMs: perf.loadMs, result: JSON.stringify(result) };
}

export async function runPlatformBench(root: string, duration = '10m'): Promise<void> {
  const scenario = join(root, 'scenarios/fleet.yaml');
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-platform-'));
  try {
    console.log(`\nplatform thread: fleet.yaml, --duration ${duration}, model fidelity (each run in its own process from dist/)`);
    const base = runOnce(root, scenario, duration, 'off', dir);
    const own = runOnce(root, scenario, duration, 'on', dir);
    for (const r of [base, own]) {
      console.log(`  platform ${r.mode === 'off' ? 'in the run thread ' : 'in its own thread'}  wall ${(r.wallMs / 1000).toFixed(1)} s  CPU ${r.cpuPercent} %  peak RSS ${r.peakRssMb} MB  (load ${(r.loadMs / 1000).toFixed(1)} s)`);
    }
    console.log(`  wall time own thread / run thread: x${(own.wallMs / base.wallMs).toFixed(2)} (target <= 0.6); CPU ${own.cpuPercent} % (target >= 170 %)`);
    console.log(`  results byte-identical: ${own.result === base.result}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await Promise.resolve();
}
