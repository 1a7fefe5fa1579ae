import { writeFileSync } from 'node:fs';
import { parseDuration } from '../core/time.js';
import { EXPLORE_FAULT_KINDS, type ExploreFaultKind } from '../explore/draw.js';
import { explore, shellQuoted, type ExploreReport } from '../explore/explore.js';
import { DEFAULT_INVARIANTS, thresholdsInvariant } from '../explore/invariants.js';
import { MAX_EXPECTATIONS, parseExpectation, type Expectation } from '../scenario/expectations.js';
import { autoJobs, MAX_JOBS, startRunPool } from '../explore/pool.js';
import { runOne } from '../explore/run-one.js';
import { formatFaultSchedule } from '../scenario/fault-schedule.js';
import { junitXml, type JunitCase, type JunitSuite } from './junit.js';
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
  const timeBudgetMs =
    typeof flags['time-budget'] === 'string' ? duration('time-budget', flags['time-budget']) : undefined;
  const kinds = typeof flags.kinds === 'string' ? kindsOf(flags.kinds) : EXPLORE_FAULT_KINDS;
  const expectations = expectationsOf(flags.expect);
  const invariantCmd = typeof flags['invariant-cmd'] === 'string' ? flags['invariant-cmd'] : undefined;
  const loaded = loadScenarioFile(file, { durationMs });
  if (!loaded.ok) {
    for (const d of loaded.diagnostics) io.stderr.write(`${d.file}:${d.line}:${d.col} ${d.path}: ${d.message}\n`);
    return 2;
  }
  // Loaded and expanded once: each run (in a worker thread with --jobs) gets this model and its schedule.
  const model = { ...loaded.model, faults: [] };
  const jobs = jobsOf(flags.jobs);
  const pool = jobs > 1 ? await startRunPool(jobs, { model, invariantCmd: invariantCmd ?? null }) : null;
  const targets = {
    hives: [...new Set(model.hives.map((h) => h.name))],
    sensors: [...new Set(model.sensors.map((s) => s.name))],
  };
  const report = await explore({
    jobs,
    invariants:
      expectations.length === 0 ? DEFAULT_INVARIANTS : [...DEFAULT_INVARIANTS, thresholdsInvariant(expectations)],
    // The replay judges the same thresholds, so it exits 1 on the same failure.
    replayArgs: expectations.map((e) => `--expect ${shellQuoted(e.text)}`).join(' '),
    scenario: file,
    runs,
    ...(timeBudgetMs !== undefined ? { timeBudgetMs } : {}),
    durationMs,
    seed,
    kinds,
    maxFaults,
    targets,
    run: (faults) => (pool ? pool.run(faults) : runOne({ model, invariantCmd: invariantCmd ?? null }, faults)),
    onProgress: (p) =>
      io.stderr.write(
        `explore: ${p.done}/${p.runs} runs, ${p.runsPerHour} runs/hour, ${p.failures} failure(s)${p.leftMs === null ? '' : `, ${Math.ceil(p.leftMs / 1000)} s left`}\n`,
      ),
  }).finally(() => pool?.close());
  print(report, io);
  if (typeof flags.report === 'string') writeFileSync(flags.report, `${JSON.stringify(report, null, 2)}\n`);
  if (typeof flags.junit === 'string') writeFileSync(flags.junit, junitXml([exploreSuite(report)]));
  return report.failures.length > 0 ? 1 : 0;
}

function exploreSuite(r: ExploreReport): JunitSuite {
  const cases: JunitCase[] = r.failures.map((f) => ({
    name: `run ${f.index}: ${f.replay}`,
    classname: `explore.${r.scenario}`,
    failure: {
      message: f.shrunkViolations.join('; '),
      details: `drawn: ${formatFaultSchedule(f.faults)}\nviolations: ${f.violations.join('; ')}\n${f.deterministic ? 'deterministic' : 'NOT deterministic'}\nreplay: ${f.replay}`,
    },
  }));
  if (cases.length === 0)
    cases.push({ name: `${r.runs} runs, seed ${r.seed}: every invariant held`, classname: `explore.${r.scenario}` });
  return { name: 'explore', cases };
}

function print(r: ExploreReport, io: Io): void {
  io.stdout.write(
    `occusim explore: ${r.scenario}, seed ${r.seed}: ${r.runs} runs of ${Math.round(r.durationMs / 60_000)} min in ${(r.wallMs / 1000).toFixed(1)} s (${r.runsPerHour} runs/hour, ${r.jobs} job(s)), ${r.failures.length} failure(s)\n`,
  );
  for (const f of r.failures) {
    io.stdout.write(`  run ${f.index}: ${f.violations.join('; ')}\n`);
    io.stdout.write(
      `    ${f.deterministic ? 'deterministic (re-run gave the same result)' : 'NOT deterministic: the re-run differed'}; shrunk from ${f.faults.length} to ${f.shrunk.length} fault(s) in ${f.shrinkRuns} runs\n`,
    );
    io.stdout.write(`    replay: ${f.replay}\n`);
  }
}

const usage = (message: string): AppError => new AppError(ErrorCodes.USAGE, message);

/** `--expect` thresholds (run's syntax), each judged after every run; a bad one is refused before any run. */
function expectationsOf(flag: Flags[string]): Expectation[] {
  const texts = flag === undefined ? [] : Array.isArray(flag) ? flag : typeof flag === 'string' ? [flag] : [];
  if (texts.length > MAX_EXPECTATIONS) throw usage(`at most ${MAX_EXPECTATIONS} thresholds, got ${texts.length}`);
  return texts.map((text) => {
    const r = parseExpectation(text);
    if (!r.ok) throw usage(`--expect: ${r.message}`);
    return r.expectation;
  });
}

/** `--jobs auto|N`: worker threads running the schedules (1: in this thread). */
function jobsOf(flag: Flags[string]): number {
  if (flag === undefined || flag === 'auto') return autoJobs();
  if (typeof flag !== 'string') throw usage('--jobs needs auto or a number');
  return integerFlag('jobs', flag, 1, MAX_JOBS);
}

function duration(name: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === null || ms <= 0)
    throw usage(`--${name} must be a duration like 90s, 30m or 1h, got ${JSON.stringify(text)}`);
  return ms;
}

function kindsOf(text: string): ExploreFaultKind[] {
  const kinds = text.split(',').map((k) => k.trim());
  for (const k of kinds)
    if (!(EXPLORE_FAULT_KINDS as readonly string[]).includes(k))
      throw usage(`--kinds: unknown fault kind ${JSON.stringify(k)}; one of ${EXPLORE_FAULT_KINDS.join(', ')}`);
  return kinds as ExploreFaultKind[];
}
