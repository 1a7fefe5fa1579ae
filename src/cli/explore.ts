import { writeFileSync } from 'node:fs';
import { parseDuration } from '../core/time.js';
import { EXPLORE_FAULT_KINDS, type ExploreFaultKind } from '../explore/draw.js';
import { explore, type ExploreReport } from '../explore/explore.js';
import { runScenario } from '../run/run-scenario.js';
import { loadScenarioFile } from '../scenario/load.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Flags, Io } from './io.js';

/**
 * `occusim explore <scenario> [--runs N] [--time-budget 10m] [--duration 30m] [--seed S]
 * [--kinds k,k] [--max-faults N] [--report out.json]` (docs/explore.md). Exit 0 when every run
 * held, 1 when a failure was found (each printed with its shrunk schedule and replay command).
 */
export async function exploreCommand(file: string, flags: Flags, io: Io): Promise<number> {
  const runs = typeof flags.runs === 'string' ? integer('runs', flags.runs, 1, 1_000_000) : 20;
  const seed = typeof flags.seed === 'string' ? integer('seed', flags.seed, 0, 2 ** 31) : 1;
  const maxFaults = typeof flags.maxFaults === 'string' ? integer('max-faults', flags.maxFaults, 1, 20) : 3;
  const durationMs = duration('duration', typeof flags.duration === 'string' ? flags.duration : '30m');
  const timeBudgetMs = typeof flags.timeBudget === 'string' ? duration('time-budget', flags.timeBudget) : undefined;
  const kinds = typeof flags.kinds === 'string' ? kindsOf(flags.kinds) : EXPLORE_FAULT_KINDS;
  const loaded = loadScenarioFile(file, { durationMs });
  if (!loaded.ok) {
    for (const d of loaded.diagnostics) io.stderr.write(`${d.file}:${d.line}:${d.col} ${d.path}: ${d.message}\n`);
    return 2;
  }
  const { model } = loaded;
  const targets = { hives: [...new Set(model.hives.map((h) => h.name))], sensors: [...new Set(model.sensors.map((s) => s.name))] };
  const report = await explore({
    scenario: file,
    runs,
    ...(timeBudgetMs !== undefined ? { timeBudgetMs } : {}),
    durationMs,
    seed,
    kinds,
    maxFaults,
    targets,
    run: async (faults) => (await runScenario(file, { durationMs, faults, keepStore: false })).result,
    onProgress: (p) => io.stderr.write(`explore: ${p.done}/${p.runs} runs, ${p.runsPerHour} runs/hour, ${p.failures} failure(s)\n`),
  });
  print(report, io);
  if (typeof flags.report === 'string') writeFileSync(flags.report, `${JSON.stringify(report, null, 2)}\n`);
  return report.failures.length > 0 ? 1 : 0;
}

function print(r: ExploreReport, io: Io): void {
  io.stdout.write(`occusim explore: ${r.scenario}, seed ${r.seed}: ${r.runs} runs of ${Math.round(r.durationMs / 60_000)} min in ${(r.wallMs / 1000).toFixed(1)} s (${r.runsPerHour} runs/hour), ${r.failures.length} failure(s)\n`);
  for (const f of r.failures) {
    io.stdout.write(`  run ${f.index}: ${f.violations.join('; ')}\n`);
    io.stdout.write(`    ${f.deterministic ? 'deterministic (re-run gave the same result)' : 'NOT deterministic: the re-run differed'}; shrunk from ${f.faults.length} to ${f.shrunk.length} fault(s) in ${f.shrinkRuns} runs\n`);
    io.stdout.write(`    replay: ${f.replay}\n`);
  }
}

const usage = (message: string): AppError => new AppError(ErrorCodes.USAGE, message);

function integer(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw usage(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

function duration(name: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === null || ms <= 0) throw usage(`--${name} must be a duration like 90s, 30m or 1h, got ${JSON.stringify(text)}`);
  return ms;
}

function kindsOf(text: string): ExploreFaultKind[] {
  const kinds = text.split(',').map((k) => k.trim());
  for (const k of kinds) if (!(EXPLORE_FAULT_KINDS as readonly string[]).includes(k)) throw usage(`--kinds: unknown fault kind ${JSON.stringify(k)}; one of ${EXPLORE_FAULT_KINDS.join(', ')}`);
  return kinds as ExploreFaultKind[];
}
