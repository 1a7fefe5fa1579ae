import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDuration } from '../core/time.js';
import { EXPLORE_FAULT_KINDS, type ExploreFaultKind } from '../explore/draw.js';
import { explore, type ExploreReport, type RunOutcome } from '../explore/explore.js';
import { formatFaultSchedule } from '../scenario/fault-schedule.js';
import type { FaultFile } from '../scenario/network-schema.js';
import { junitXml, type JunitCase, type JunitSuite } from './junit.js';
import { runScenario } from '../run/run-scenario.js';
import { loadScenarioFile } from '../scenario/load.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { integerFlag } from './commands.js';
import type { Flags, Io } from './io.js';

/**
 * `occusim explore <scenario> [--runs N] [--time-budget 10m] [--duration 30m] [--seed S]
 * [--kinds k,k] [--max-faults N] [--report out.json]` (docs/explore.md). Exit 0 when every run
 * held, 1 when a failure was found (each printed with its shrunk schedule and replay command).
 */
export async function exploreCommand(file: string, flags: Flags, io: Io): Promise<number> {
  const runs = typeof flags.runs === 'string' ? integerFlag('runs', flags.runs, 1, 1_000_000) : 20;
  const seed = typeof flags.seed === 'string' ? integerFlag('seed', flags.seed, 0) : 1;
  const maxFaults = typeof flags['max-faults'] === 'string' ? integerFlag('max-faults', flags['max-faults'], 1, 20) : 3;
  const durationMs = duration('duration', typeof flags.duration === 'string' ? flags.duration : '30m');
  const timeBudgetMs = typeof flags['time-budget'] === 'string' ? duration('time-budget', flags['time-budget']) : undefined;
  const kinds = typeof flags.kinds === 'string' ? kindsOf(flags.kinds) : EXPLORE_FAULT_KINDS;
  const invariantCmd = typeof flags['invariant-cmd'] === 'string' ? flags['invariant-cmd'] : undefined;
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
    run: (faults) => (invariantCmd === undefined ? runAlone(file, durationMs, faults) : runJudged(file, durationMs, faults, invariantCmd)),
    onProgress: (p) => io.stderr.write(`explore: ${p.done}/${p.runs} runs, ${p.runsPerHour} runs/hour, ${p.failures} failure(s)\n`),
  });
  print(report, io);
  if (typeof flags.report === 'string') writeFileSync(flags.report, `${JSON.stringify(report, null, 2)}\n`);
  if (typeof flags.junit === 'string') writeFileSync(flags.junit, junitXml([exploreSuite(report)]));
  return report.failures.length > 0 ? 1 : 0;
}

async function runAlone(file: string, durationMs: number, faults: FaultFile[]): Promise<RunOutcome> {
  return { result: (await runScenario(file, { durationMs, faults, keepStore: false })).result };
}

/**
 * A run judged by the user's command as well: it gets the run's JSON report, its store and
 * the schedule in OCCUSIM_REPORT, OCCUSIM_STORE and OCCUSIM_FAULTS (the run's directory is
 * removed after); a non-zero exit is a violation, its last output lines the reason.
 */
async function runJudged(file: string, durationMs: number, faults: FaultFile[], cmd: string): Promise<RunOutcome> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-explore-'));
  try {
    const dbPath = join(dir, 'store.sqlite');
    const report = await runScenario(file, { durationMs, faults, dbPath });
    const reportPath = join(dir, 'report.json');
    writeFileSync(reportPath, JSON.stringify(report));
    const env = { ...process.env, OCCUSIM_REPORT: reportPath, OCCUSIM_STORE: `sqlite:${dbPath}`, OCCUSIM_FAULTS: formatFaultSchedule(faults) };
    const r = spawnSync('sh', ['-c', cmd], { env, encoding: 'utf8', timeout: INVARIANT_CMD_TIMEOUT_MS, maxBuffer: 1024 * 1024 });
    if (r.status === 0) return { result: report.result };
    const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-3).join(' / ').slice(0, 500);
    const why = r.error !== undefined ? `did not finish (${r.error.message})` : `exit ${r.status ?? r.signal}`;
    return { result: report.result, external: [`${why}${said === '' ? '' : `: ${said}`}`] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A user's invariant command gets 5 minutes per run: a hung judge must not hang the search. */
const INVARIANT_CMD_TIMEOUT_MS = 5 * 60_000;

function exploreSuite(r: ExploreReport): JunitSuite {
  const cases: JunitCase[] = r.failures.map((f) => ({
    name: `run ${f.index}: ${f.replay}`,
    classname: `explore.${r.scenario}`,
    failure: { message: f.shrunkViolations.join('; '), details: `drawn: ${formatFaultSchedule(f.faults)}\nviolations: ${f.violations.join('; ')}\n${f.deterministic ? 'deterministic' : 'NOT deterministic'}\nreplay: ${f.replay}` },
  }));
  if (cases.length === 0) cases.push({ name: `${r.runs} runs, seed ${r.seed}: every invariant held`, classname: `explore.${r.scenario}` });
  return { name: 'explore', cases };
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
