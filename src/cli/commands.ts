import { writeFileSync } from 'node:fs';
import { AppError, ErrorCodes } from '../core/errors.js';
import { parseDuration } from '../core/time.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import { scenarioJsonSchema } from '../scenario/schema.js';
import type { RunOptions } from '../run/options.js';
import { runScenario } from '../run/run-scenario.js';
import { createProgressBar } from './progress.js';
import { serveModel, serveOptions, serveSignal } from './serve.js';
import { formatSummary } from './summary.js';

/** What a command needs from the process: streams, so commands are testable in-process. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WriteStream;
}

export type Flags = Record<string, string | boolean | undefined>;

export async function runCommand(file: string, flags: Flags, io: Io): Promise<number> {
  const opts = runOptionsFromFlags(flags);
  const serve = flags.serve === true ? serveOptions(flags) : null;
  const quiet = flags.quiet === true;
  const bar = !quiet && io.stderr.isTTY ? createProgressBar(io.stderr, 'simulating') : null;
  if (bar) opts.onProgress = (done, total) => bar.update(done, total);
  const report = await runScenario(file, opts);
  bar?.done();
  if (typeof flags.report === 'string') writeFileSync(flags.report, `${JSON.stringify(report, null, 2)}\n`);
  if (!quiet) io.stdout.write(`${formatSummary(report)}\n`);
  if (serve) {
    const loaded = loadScenarioFile(file, { ...(opts.seed !== undefined ? { seed: opts.seed } : {}) });
    if (loaded.ok) await serveModel(loaded.model, { ...serve, dbPath: report.db }, io, serveSignal());
  }
  // A run that lost data has found a failure condition (exit 1).
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
  if (typeof flags.fidelity === 'string') {
    if (flags.fidelity !== 'model' && flags.fidelity !== 'frame') throw usage(`--fidelity must be model or frame, got ${JSON.stringify(flags.fidelity)}`);
    opts.fidelity = flags.fidelity;
  }
  if (typeof flags.workers === 'string') opts.workers = integerFlag('workers', flags.workers, 0, 64); // frame fidelity; 0 = main thread
  if (typeof flags.db === 'string') opts.dbPath = flags.db;
  if (typeof flags['mqtt-port'] === 'string') opts.mqttPort = integerFlag('mqtt-port', flags['mqtt-port'], 0, 65535);
  if (typeof flags.broker === 'string') opts.brokerUrl = flags.broker;
  if (typeof flags.record === 'string') opts.record = flags.record;
  return opts;
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
