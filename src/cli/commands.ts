import { writeFileSync } from 'node:fs';
import { systemClock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { parseDuration } from '../core/time.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import { scenarioJsonSchema } from '../scenario/schema.js';
import type { RunOptions } from '../run/options.js';
import { runScenario, type RunReport } from '../run/run-scenario.js';
import { createProgressBar } from './progress.js';
import { printListeners, serveOptions, serveSignal, untilAborted } from './serve.js';
import { formatSummary } from './summary.js';
import { storeFlag } from './store-flag.js';

import type { Flags, Io } from './io.js';
export type { Flags, Io } from './io.js';

export async function runCommand(file: string, flags: Flags, io: Io): Promise<number> {
  const opts = runOptionsFromFlags(flags);
  const serve = flags.serve === true ? serveOptions(flags) : null;
  const quiet = flags.quiet === true;
  const bar = !quiet && io.stderr.isTTY ? createProgressBar(io.stderr, 'simulating') : null;
  if (bar) opts.onProgress = (done, total) => bar.update(done, total);
  opts.onWarning = (message) => io.stderr.write(`${message}\n`);
  const finish = (report: RunReport): void => {
    bar?.done();
    if (typeof flags.report === 'string') writeFileSync(flags.report, `${JSON.stringify(report, null, 2)}\n`);
    if (!quiet) io.stdout.write(`${formatSummary(report)}\n`);
  };
  if (!serve) {
    const report = await runScenario(file, opts);
    finish(report);
    return exitCodeOf(report);
  }
  // Served: the API is up from the start (a real-time run can be watched), the run's end is
  // announced, then the same platform keeps serving until Ctrl-C, which also ends a run early.
  const signal = serveSignal();
  const report = await runScenario(file, {
    ...opts,
    signal,
    api: { port: serve.port, audience: serve.audience },
    onPlatform: (ready) => printListeners(io, ready, serve.audience),
    beforeClose: async (r) => {
      finish(r);
      io.stdout.write(`run ${r.perf.interrupted ? 'interrupted' : 'finished'}; serving until Ctrl-C\n`);
      await untilAborted(signal);
    },
  });
  return exitCodeOf(report);
}

/**
 * `occusim serve --scenario s --feed [--speed F]`: the platform fed live by the scenario, at
 * real time unless told otherwise (`--speed max` is refused: a feed is meant to be watched).
 */
export function feedCommand(flags: Flags, io: Io): Promise<number> {
  if (typeof flags.scenario !== 'string') throw usage('occusim serve --feed needs --scenario <file>');
  if (flags.speed === 'max') throw usage('occusim serve --feed runs in real time: --speed must be a factor such as 1 or 10 (use occusim run --serve for max speed)');
  return runCommand(flags.scenario, { ...flags, serve: true, speed: typeof flags.speed === 'string' ? flags.speed : '1' }, io);
}

/** A run that lost data has found a failure condition (exit 1). */
function exitCodeOf(report: RunReport): number {
  return report.result.messages.lost > 0 ? 1 : 0;
}

function runOptionsFromFlags(flags: Flags): RunOptions {
  const opts: RunOptions = {};
  if (typeof flags.seed === 'string') opts.seed = integerFlag('seed', flags.seed, 0);
  if (typeof flags.speed === 'string' && flags.speed !== 'max') {
    const f = Number(flags.speed);
    if (!(f > 0) || !Number.isFinite(f)) throw usage(`--speed must be 'max' or a positive number, got ${JSON.stringify(flags.speed)}`);
    opts.speed = f;
  }
  if (typeof flags.duration === 'string') {
    const d = parseDuration(flags.duration);
    if (d === null || d <= 0) throw usage(`--duration must be a duration like 90s, 30m, 2h or 1h30m, got ${JSON.stringify(flags.duration)}`);
    opts.durationMs = d;
  }
  if (typeof flags.start === 'string') opts.start = startFlag(flags.start);
  if (typeof flags.fidelity === 'string') {
    if (flags.fidelity !== 'model' && flags.fidelity !== 'frame') throw usage(`--fidelity must be model or frame, got ${JSON.stringify(flags.fidelity)}`);
    opts.fidelity = flags.fidelity;
  }
  if (typeof flags.workers === 'string') opts.workers = integerFlag('workers', flags.workers, 0, 64); // frame fidelity; 0 = main thread
  const store = storeFlag(flags);
  if (store !== null) opts.dbPath = store;
  // A temporary store is the CLI's to clean up: kept only when asked (a fleet's is gigabytes).
  if (store === null && flags.keep !== true) opts.keepStore = false;
  if (flags.resume === true && flags.fresh === true) throw usage('--resume and --fresh exclude each other');
  if ((flags.resume === true || flags.fresh === true) && store === null) throw usage(`--${flags.resume === true ? 'resume' : 'fresh'} needs --store sqlite:FILE (or --db FILE): the store to continue or to start over`);
  if (typeof flags['platform-thread'] === 'string') {
    const m = flags['platform-thread'];
    if (m !== 'auto' && m !== 'on' && m !== 'off') throw usage(`--platform-thread must be auto, on or off, got ${JSON.stringify(m)}`);
    opts.platformThread = m === 'auto' ? 'auto' : m === 'on';
  }
  if (flags.resume === true) opts.storePolicy = 'resume';
  if (flags.fresh === true) opts.storePolicy = 'fresh';
  if (typeof flags['mqtt-port'] === 'string') opts.mqttPort = integerFlag('mqtt-port', flags['mqtt-port'], 0, 65535);
  if (typeof flags.broker === 'string') opts.brokerUrl = flags.broker;
  if (typeof flags.record === 'string') opts.record = flags.record;
  // Comma-separated CIDR blocks webhooks may reach although loopback or private (a local receiver).
  if (typeof flags['webhook-allow'] === 'string') opts.webhooks = { allow: flags['webhook-allow'].split(',').map((c) => c.trim()) };
  return opts;
}

/**
 * `--start now` (the current minute, UTC) or a time in the scenario's syntax: site-local
 * `2026-11-23T08:00`, or with an offset or Z.
 */
function startFlag(text: string): string {
  // The one wall-clock read of a run, through the system clock: it sets the scenario's start.
  if (text === 'now') return new Date(Math.floor(systemClock.now() / 60_000) * 60_000).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/.test(text) || Number.isNaN(Date.parse(text.length === 16 ? `${text}Z` : text))) {
    throw usage(`--start must be 'now' or a time like 2026-11-23T08:00 (site-local) or 2026-11-23T07:00Z, got ${JSON.stringify(text)}`);
  }
  return text;
}

function integerFlag(name: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw usage(`--${name} must be an integer in ${min}..${max}, got ${JSON.stringify(text)}`);
  return n;
}

function usage(message: string): AppError {
  return new AppError(ErrorCodes.USAGE, message);
}

export function validateCommand(file: string, io: Io): number {
  const result = loadScenarioFile(file);
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

export function schemaCommand(io: Io): number {
  io.stdout.write(`${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`);
  return 0;
}
