import { AppError, ErrorCodes } from '../core/errors.js';
import { MAX_EXPECTATIONS, parseExpectation, type Expectation } from '../scenario/expectations.js';
import type { StorePolicy } from '../store/guard.js';
import { parseStoreLocation, type StoreLocation } from '../store/location.js';
import type { PlatformWebhookOptions, ServedApi } from '../platform/platform.js';
import { mqttPort, type PlatformSettings } from '../platform/config.js';
import type { RunOptions } from './options.js';
import type { ShardSpec } from './shard.js';

/**
 * A run's settings: `RunOptions` with its defaults filled in and validated once, where the run
 * is entered (`runScenario`, which `occusim run` calls), then frozen and read whole by the run's
 * parts. Frozen at the top and in what it builds itself; what the caller hands in whole (`api`,
 * `webhooks`) is read, not copied or frozen: it is the caller's. Callbacks (`onProgress`, `onPlatform`, …) are not settings and stay in `RunOptions`;
 * the scenario's overrides (seed, duration, faults, ramp) shape the model instead (run-scenario.ts).
 */
export interface SimulatorConfig {
  readonly speed: 'max' | number;
  /** The store, parsed once; null: a temporary SQLite file. */
  readonly store: StoreLocation | null;
  /** Without `store`: keep the temporary store after the run (the report's `db` can be opened). */
  readonly keepStore: boolean;
  readonly storePolicy: StorePolicy;
  /** The embedded broker's port (0: a free one) and interface (null: 127.0.0.1). */
  readonly mqtt: { readonly port: number; readonly host: string | null };
  /** An external broker instead of the embedded one. */
  readonly brokerUrl: string | null;
  readonly shard: ShardSpec | null;
  readonly externalIngest: boolean;
  /** A capture file of every message the embedded broker accepts. */
  readonly record: string | null;
  /** Edge worker threads (frame fidelity); null: the edge's default. */
  readonly workers: number | null;
  readonly platformThread: boolean | 'auto';
  readonly hiveThreads: number | 'auto';
  readonly api: ServedApi | null;
  readonly webhooks: Partial<Omit<PlatformWebhookOptions, 'wallTime'>> | null;
  /** The platform's settings, validated by the platform's own config (platform/config.ts). */
  readonly platform: PlatformSettings;
  /** `RunOptions.expect`, parsed: judged at the end besides the scenario's `expect:`. */
  readonly expectations: readonly Expectation[];
}

/** Most hive threads a run starts. */
export const MAX_HIVE_THREADS = 64;

/** The run's settings from the caller's options (defaults, validation); a bad one is the caller's mistake (USAGE). */
export function simulatorConfig(opts: RunOptions): SimulatorConfig {
  return Object.freeze({
    speed: speedOf(opts.speed),
    store:
      opts.dbPath === undefined
        ? null
        : typeof opts.dbPath === 'string'
          ? parseStoreLocation(opts.dbPath)
          : opts.dbPath,
    keepStore: opts.keepStore ?? true,
    storePolicy: opts.storePolicy ?? 'new',
    mqtt: Object.freeze({ port: mqttPort(opts.mqttPort ?? 0), host: opts.mqttHost ?? null }),
    brokerUrl: opts.brokerUrl ?? null,
    ...shardingOf(opts),
    record: recordOf(opts),
    workers: opts.workers ?? null,
    platformThread: opts.platformThread ?? 'auto',
    hiveThreads: hiveThreadsOf(opts.hiveThreads),
    api: opts.api ?? null,
    webhooks: opts.webhooks ?? null,
    platform: Object.freeze({ ...opts.platform }),
    expectations: Object.freeze(expectationsOf(opts.expect ?? [])),
  });
}

function speedOf(speed: RunOptions['speed']): 'max' | number {
  const s = speed ?? 'max';
  if (s !== 'max' && !(typeof s === 'number' && s > 0 && Number.isFinite(s)))
    throw new AppError(ErrorCodes.USAGE, `speed must be 'max' or a positive number, got ${String(s)}`);
  return s;
}

function hiveThreadsOf(asked: RunOptions['hiveThreads']): number | 'auto' {
  const t = asked ?? 'auto';
  if (t !== 'auto' && !(Number.isInteger(t) && t >= 0 && t <= MAX_HIVE_THREADS))
    throw new AppError(
      ErrorCodes.USAGE,
      `hive threads must be an integer in 0..${MAX_HIVE_THREADS} or 'auto', got ${String(t)}`,
    );
  return t;
}

function shardingOf(opts: RunOptions): Pick<SimulatorConfig, 'shard' | 'externalIngest'> {
  const shard = opts.shard ?? null;
  if (shard && opts.brokerUrl === undefined)
    throw new AppError(
      ErrorCodes.USAGE,
      `--shard ${shard.index}/${shard.count} needs --broker mqtt://…: the broker every shard publishes to`,
    );
  const externalIngest = opts.externalIngest === true;
  // The shared store is the ingest processes': the shard cannot forget its previous end's drain
  // there, so a longer resumed run would store less than an uninterrupted one (docs/scale-out.md).
  if (externalIngest && opts.storePolicy === 'resume')
    throw new AppError(
      ErrorCodes.USAGE,
      '--resume with --external-ingest is not supported: run the whole sharded run again into a new database (serve --shards on an empty store)',
    );
  return { shard, externalIngest };
}

function recordOf(opts: RunOptions): string | null {
  if (opts.record === undefined) return null;
  if (opts.brokerUrl !== undefined)
    throw new AppError(
      ErrorCodes.USAGE,
      '--record taps the embedded broker: it cannot be combined with --broker (record with the embedded broker, then replay to yours)',
    );
  return opts.record;
}

function expectationsOf(texts: readonly string[]): Expectation[] {
  if (texts.length > MAX_EXPECTATIONS)
    throw new AppError(ErrorCodes.USAGE, `at most ${MAX_EXPECTATIONS} thresholds, got ${texts.length}`);
  return texts.map((text) => {
    const r = parseExpectation(text);
    if (!r.ok) throw new AppError(ErrorCodes.USAGE, `--expect: ${r.message}`);
    return r.expectation;
  });
}
