import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, ErrorCodes } from '../core/errors.js';
import { isoUtc } from '../core/time.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { RunOptions } from './options.js';
import type { RunReport } from './run-report.js';

/**
 * The `platform_restart` fault (docs/scenario-format.md): at each restart instant the run stops
 * as `occusim run --duration <that instant>` stops, and is continued from its store with
 * `--resume`, as an operator restarting the platform would. A resumed run simulates again from
 * the start, its store refusing what it already holds (docs/platform.md, --resume), so the end
 * state is the uninterrupted run's: the fault is loss-free by design, and explore holds the
 * stored series to the fault-free run's. The report is the last leg's, with the restarts named.
 */
export function platformRestartsOf(model: ScenarioModel): number[] {
  const at = (model.faults ?? []).filter((f) => f.kind === 'platform_restart').map((f) => f.atMs);
  return [...new Set(at)]
    .filter((t) => t > model.startMs && t < model.startMs + model.durationMs)
    .sort((a, b) => a - b);
}

/** The options a leg passes on: the model is already loaded, retimed and overridden, so none of that again. */
function legOptions(options: RunOptions): RunOptions {
  const {
    seed: _seed,
    durationMs: _duration,
    fidelity: _fidelity,
    start: _start,
    faults: _faults,
    ramp: _ramp,
    timelineStartMs: _timeline,
    ...rest
  } = options;
  return rest;
}

export async function runWithPlatformRestarts(
  model: ScenarioModel,
  options: RunOptions,
  restarts: readonly number[],
  run: (model: ScenarioModel, options: RunOptions) => Promise<RunReport>,
): Promise<RunReport> {
  if (options.record !== undefined)
    throw new AppError(
      ErrorCodes.USAGE,
      'platform_restart cannot be recorded (--record): a restarted run sends its batches again from the start',
    );
  if (options.shard !== undefined || options.externalIngest === true)
    throw new AppError(
      ErrorCodes.USAGE,
      'platform_restart needs the run’s own platform: it is not supported with --shard or --external-ingest',
    );
  // Every leg needs the same store: a temporary one lives in a directory of its own until the last leg ends.
  const temporary = options.dbPath === undefined ? mkdtempSync(join(tmpdir(), 'occusim-restarts-')) : null;
  const dbPath = options.dbPath ?? join(temporary as string, 'store.sqlite');
  const kept = options.keepStore !== false && temporary === null;
  const faults = (model.faults ?? []).filter((f) => f.kind !== 'platform_restart');
  const base = { ...legOptions(options), dbPath };
  try {
    for (const [i, t] of restarts.entries())
      await run(
        { ...model, faults, durationMs: t - model.startMs },
        { ...base, keepStore: true, storePolicy: i === 0 ? (options.storePolicy ?? 'new') : 'resume' },
      );
    const last = await run({ ...model, faults }, { ...base, keepStore: kept, storePolicy: 'resume' });
    // A temporary store is this function's, removed below: the last leg's report cannot know.
    return { ...last, platformRestarts: restarts.map(isoUtc), ...(kept ? {} : { dbKept: false }) };
  } finally {
    if (temporary !== null) rmSync(temporary, { recursive: true, force: true });
  }
}
