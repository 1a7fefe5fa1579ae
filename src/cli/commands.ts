import { writeFileSync } from 'node:fs';
import { parseRamp } from '../scenario/ramp.js';
import { systemClock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { parseDuration } from '../core/time.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile, type LoadResult } from '../scenario/load.js';
import { parseFaultSchedule } from '../scenario/fault-schedule.js';
import { formatThresholds, thresholdSuite } from './thresholds.js';
import { junitXml } from './junit.js';
import { checkOutputFiles } from './preflight.js';
import {
  hostOf,
  mqttPortOf,
  platformSettingsOf,
  webhookConcurrencyOf,
  webhookFaultsFlag,
  webhookStormFlag,
  webhookTimestampsFlag,
} from './options.js';
import { scenarioJsonSchema } from '../scenario/schema.js';
import type { RunOptions } from '../run/options.js';
import { runScenario, type RunReport } from '../run/run-scenario.js';
import { createProgressBar } from './progress.js';
import { printListeners, servedApi, serveOptions, serveSignal, untilAborted } from './serve.js';
import { formatSummary } from './summary.js';
import { storeFlag } from './store-flag.js';
import { reportFileWriter } from './report-files.js';
import { parseShard } from '../run/shard.js';

import type { Flags, Io } from './io.js';
export type { Flags, Io } from './io.js';

/** `feed`: a live feed (`serve --feed`), which Ctrl-C stops as the normal end rather than interrupts. */
export async function runCommand(file: string, flags: Flags, io: Io, feed = false): Promise<number> {
  const opts = runOptionsFromFlags(flags);
  if (flags.serve !== true && (flags.port !== undefined || flags.audience !== undefined))
    throw usage(`--${flags.port !== undefined ? 'port' : 'audience'} belongs to the API of --serve`);
  // --truth / --html (src/cli/report-files.ts)
  const reportFiles = reportFileWriter(flags);
  if (reportFiles) opts.onArtefacts = reportFiles;
  const serve = flags.serve === true ? serveOptions(flags) : null;
  checkOutputFiles(flags, ['report', 'junit', 'record', 'html', 'truth', 'consumer-expect']);
  const quiet = flags.quiet === true;
  // A redrawn line on a terminal, plain periodic lines otherwise (CI logs); src/cli/progress.ts.
  const bar = !quiet ? createProgressBar(io.stderr, { speed: opts.speed ?? 'max' }) : null;
  if (bar) {
    opts.onSimulationStart = () => bar.begin();
    opts.onProgress = (done, total, packets) => bar.update(done, total, packets);
  }
  opts.onWarning = (message) => io.stderr.write(`${message}\n`);
  const finish = (report: RunReport): void => {
    bar?.done();
    if (typeof flags.report === 'string') writeFileSync(flags.report, `${JSON.stringify(report, null, 2)}\n`);
    if (!quiet) io.stdout.write(`${formatSummary(report)}\n`);
    if (report.expectations) io.stdout.write(formatThresholds(report.expectations));
    if (typeof flags.junit === 'string') writeFileSync(flags.junit, junitXml([thresholdSuite(report)]));
  };
  if (!serve) {
    // Ctrl-C ends the simulation early: the summary of what was simulated, then exit 130.
    const interrupt = interruptSignal();
    try {
      const report = await runScenario(file, { ...opts, signal: interrupt.signal });
      finish(report);
      return exitCodeOf(report);
    } finally {
      interrupt.dispose();
    }
  }
  // Served: the API is up from the start (a real-time run can be watched), the run's end is
  // announced, then the same platform keeps serving until Ctrl-C, which also ends a run early.
  const signal = serveSignal();
  const report = await runScenario(file, {
    ...opts,
    signal,
    api: servedApi(serve),
    onPlatform: (ready) => printListeners(io, ready, serve.audience),
    beforeClose: async (r) => {
      finish(r);
      io.stdout.write(`run ${r.perf.interrupted ? 'interrupted' : 'finished'}; serving until Ctrl-C\n`);
      await untilAborted(signal);
    },
  });
  return feed && report.perf.interrupted ? 0 : exitCodeOf(report);
}

/**
 * `occusim serve --scenario s --feed [--speed F]`: the platform fed live by the scenario, at
 * real time unless told otherwise (`--speed max` is refused: a feed is meant to be watched).
 */
export function feedCommand(flags: Flags, io: Io): Promise<number> {
  if (typeof flags.scenario !== 'string') throw usage('occusim serve --feed needs --scenario <file>');
  if (flags.speed === 'max')
    throw usage(
      'occusim serve --feed runs in real time: --speed must be a factor such as 1 or 10 (use occusim run --serve for max speed)',
    );
  return runCommand(
    flags.scenario,
    { ...flags, serve: true, speed: typeof flags.speed === 'string' ? flags.speed : '1' },
    io,
    true,
  );
}

/** Interrupted: 130 (128 + SIGINT, as shells report it); a failed threshold or lost data: 1. */
function exitCodeOf(report: RunReport): number {
  if (report.perf.interrupted) return 130;
  if (report.result.messages.lost > 0) return 1;
  return report.expectations?.some((v) => !v.passed) === true ? 1 : 0;
}

/** Aborted by the first SIGINT or SIGTERM of a run (a second one kills the process as usual). */
function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const ctl = new AbortController();
  const dispose = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  const stop = (): void => {
    dispose();
    ctl.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return { signal: ctl.signal, dispose };
}

function runOptionsFromFlags(flags: Flags): RunOptions {
  const opts: RunOptions = {};
  if (typeof flags.seed === 'string') opts.seed = integerFlag('seed', flags.seed, 0);
  if (typeof flags.speed === 'string' && flags.speed !== 'max') {
    const f = Number(flags.speed);
    if (!(f > 0) || !Number.isFinite(f))
      throw usage(`--speed must be 'max' or a positive number, got ${JSON.stringify(flags.speed)}`);
    opts.speed = f;
  }
  if (typeof flags.duration === 'string') {
    const d = parseDuration(flags.duration);
    if (d === null || d <= 0)
      throw usage(`--duration must be a duration like 90s, 30m, 2h or 1h30m, got ${JSON.stringify(flags.duration)}`);
    opts.durationMs = d;
  }
  if (typeof flags.faults === 'string') {
    const schedule = parseFaultSchedule(flags.faults);
    if (!schedule.ok) throw usage(`--faults, column ${schedule.col}: ${schedule.message}`);
    opts.faults = schedule.faults;
  }
  if (typeof flags.ramp === 'string') {
    const ramp = parseRamp(flags.ramp);
    if (!ramp.ok) throw usage(`--ramp, column ${ramp.col}: ${ramp.message}`);
    opts.ramp = ramp.steps;
  }
  if (flags.start === 'now') opts.timelineStartMs = nowMinute();
  else if (typeof flags.start === 'string') opts.start = startFlag(flags.start);
  if (typeof flags.fidelity === 'string') {
    if (flags.fidelity !== 'model' && flags.fidelity !== 'frame')
      throw usage(`--fidelity must be model or frame, got ${JSON.stringify(flags.fidelity)}`);
    opts.fidelity = flags.fidelity;
  }
  if (typeof flags.workers === 'string') opts.workers = integerFlag('workers', flags.workers, 0, 64); // frame fidelity; 0 = main thread
  const store = storeFlag(flags);
  if (store !== null) opts.dbPath = store;
  // A temporary store is the CLI's to clean up: kept only when asked (a fleet's is gigabytes).
  if (store === null && flags.keep !== true) opts.keepStore = false;
  if (flags.resume === true && flags.fresh === true) throw usage('--resume and --fresh exclude each other');
  if ((flags.resume === true || flags.fresh === true) && store === null)
    throw usage(
      `--${flags.resume === true ? 'resume' : 'fresh'} needs --store sqlite:FILE (or --db FILE): the store to continue or to start over`,
    );
  if (typeof flags['platform-thread'] === 'string') {
    const m = flags['platform-thread'];
    if (m !== 'auto' && m !== 'on' && m !== 'off')
      throw usage(`--platform-thread must be auto, on or off, got ${JSON.stringify(m)}`);
    opts.platformThread = m === 'auto' ? 'auto' : m === 'on';
  }
  if (typeof flags['hive-threads'] === 'string')
    opts.hiveThreads =
      flags['hive-threads'] === 'auto' ? 'auto' : integerFlag('hive-threads', flags['hive-threads'], 0, 64);
  if (flags.resume === true) opts.storePolicy = 'resume';
  if (flags.fresh === true) opts.storePolicy = 'fresh';
  opts.mqttPort = mqttPortOf(flags);
  opts.platform = platformSettingsOf(flags);
  if (typeof flags.host === 'string') opts.mqttHost = hostOf(flags);
  if (Array.isArray(flags.expect)) opts.expect = flags.expect;
  if (typeof flags.broker === 'string') opts.brokerUrl = flags.broker;
  if (typeof flags.shard === 'string') {
    const shard = parseShard(flags.shard);
    if (shard === null) throw usage(`--shard must be i/n (slice i of n, e.g. 1/2), got ${JSON.stringify(flags.shard)}`);
    if (opts.brokerUrl === undefined)
      throw usage(`--shard ${flags.shard} needs --broker mqtt://…: the broker every shard publishes to`);
    opts.shard = shard;
  }
  if (flags['external-ingest'] === true) {
    if (opts.shard === undefined)
      throw usage(
        '--external-ingest needs --shard i/n: the shard whose clock the ingest processes (serve --shards n) follow',
      );
    opts.externalIngest = true;
  }
  if (typeof flags.record === 'string') opts.record = flags.record;
  // Comma-separated CIDR blocks webhooks may reach although loopback or private (a local receiver).
  if (typeof flags['webhook-allow'] === 'string')
    opts.webhooks = { allow: flags['webhook-allow'].split(',').map((c) => c.trim()) };
  const concurrency = webhookConcurrencyOf(flags);
  if (concurrency !== undefined) opts.webhooks = { ...opts.webhooks, concurrency };
  const timestamps = webhookTimestampsFlag(flags);
  if (timestamps !== undefined) opts.webhooks = { ...opts.webhooks, timestamps };
  const faults = webhookFaultsFlag(flags);
  if (faults !== undefined) opts.webhooks = { ...opts.webhooks, faults };
  const storm = webhookStormFlag(flags);
  if (storm !== undefined) opts.webhooks = { ...opts.webhooks, storm };
  if (typeof flags['consumer-expect'] === 'string') opts.webhooks = { ...opts.webhooks, consumerExpect: true };
  return opts;
}

/** The current minute: `--start now` moves the scenario's timeline here (the one wall-clock read of a run). */
function nowMinute(): number {
  return Math.floor(systemClock.now() / 60_000) * 60_000;
}

/** `--start` in the scenario's syntax: site-local `2026-11-23T08:00`, or with an offset or Z. */
function startFlag(text: string): string {
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/.test(text) ||
    Number.isNaN(Date.parse(text.length === 16 ? `${text}Z` : text))
  ) {
    throw usage(
      `--start must be 'now' or a time like 2026-11-23T08:00 (site-local) or 2026-11-23T07:00Z, got ${JSON.stringify(text)}`,
    );
  }
  return text;
}

export function integerFlag(name: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw usage(`--${name} must be an integer in ${min}..${max}, got ${JSON.stringify(text)}`);
  return n;
}

function usage(message: string): AppError {
  return new AppError(ErrorCodes.USAGE, message);
}

export function validateCommand(file: string, flags: Flags, io: Io): number {
  const result = loadScenarioFile(file);
  if (flags.json === true) return validateJson(file, result, io);
  const problems = result.ok ? result.warnings : result.diagnostics;
  for (const d of problems) io.stderr.write(`${formatDiagnostic(d)}\n`);
  if (!result.ok) {
    io.stderr.write(`${result.diagnostics.filter((d) => d.severity === 'error').length} error(s) in ${file}\n`);
    return 2;
  }
  const m = result.model;
  io.stdout.write(
    `${file}: valid — ${m.sites.length} site(s), ${m.buildings.length} building(s), ${m.floors.length} floor(s), ` +
      `${m.rooms.length} room(s), ${m.sensors.length} sensor(s), ${m.hives.length} hive(s), ` +
      `${m.populations.reduce((a, p) => a + p.count, 0)} people\n`,
  );
  return 0;
}

/** `validate --json`: `{ file, valid, errors, warnings, counts }`, diagnostics as objects. */
function validateJson(file: string, result: LoadResult, io: Io): number {
  const m = result.ok ? result.model : null;
  const diagnostics = result.ok ? result.warnings : result.diagnostics;
  const doc = {
    file,
    valid: result.ok,
    errors: diagnostics.filter((d) => d.severity === 'error'),
    warnings: diagnostics.filter((d) => d.severity !== 'error'),
    counts: m && {
      sites: m.sites.length,
      buildings: m.buildings.length,
      floors: m.floors.length,
      rooms: m.rooms.length,
      sensors: m.sensors.length,
      hives: m.hives.length,
      people: m.populations.reduce((a, p) => a + p.count, 0),
    },
  };
  io.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  return result.ok ? 0 : 2;
}

export function schemaCommand(io: Io): number {
  io.stdout.write(`${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`);
  return 0;
}
