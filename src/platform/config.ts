import type { ServedApi } from '../api/server.js';
import type { OrganisationAssets } from '../assets/model.js';
import type { Clock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { MINUTE_MS } from '../core/time.js';
import { DEFAULT_LOOKBACK_MS } from '../cloud/cloud.js';
import type { StorePolicy } from '../store/guard.js';
import type { StoreLocation } from '../store/location.js';
import type { PlatformWebhookOptions } from '../webhooks/platform-hooks.js';
import type { IngestPartition } from './ingest-partition.js';
import { DEFAULT_LEASE_MS } from './partition-leases.js';
import type { PlatformFaultTimes } from './platform-faults.js';

/**
 * What a platform is (broker, cloud ingest, store, API, webhooks): plain data, its defaults
 * filled in and validated once by `platformConfig` where the platform is entered (`occusim
 * serve`, a run, the library), frozen, and handed whole to `startPlatform`, or to the
 * platform's worker thread as it is. Each part reads its slice (`mqtt`, `api`, `webhooks`, …).
 * What cannot cross a thread (a clock, callbacks) is `PlatformLocals`.
 */
export interface PlatformConfig {
  /** The organisations served (the asset catalogue is built from them, in the platform's thread). */
  readonly organisations: readonly OrganisationAssets[];
  /** A driven platform's virtual clock starts here (ignored when `PlatformLocals.clock` is given). */
  readonly startMs: number;
  /** Sampling grid of the sensors (every sensing instant is a multiple of it), ms. */
  readonly tickMs: number;
  /** Where the store lives, parsed once by the entry point; null: a new SQLite file in a temporary directory. */
  readonly store: StoreLocation | null;
  /** With `store` null: delete the temporary store when the platform closes (the CLI without --keep). */
  readonly removeTemporaryStore: boolean;
  /** What to do with a store that already holds a run (`new`: refuse it). */
  readonly storePolicy: StorePolicy;
  /** Identifies the run in the store (scenario name and seed): `resume` continues only the same run. */
  readonly runKey: string;
  /**
   * The simulated end of a run that sends everything again from its start when resumed: a
   * resumed run's store forgets the previous run's end-of-run drain (store/guard.ts). Null: no planned end (serve).
   */
  readonly runEndMs: number | null;
  /** The embedded broker's port (0: a free one) and interface (null: 127.0.0.1); unused with `brokerUrl`. */
  readonly mqtt: { readonly port: number; readonly host: string | null };
  /** An external MQTT broker instead of the embedded one. */
  readonly brokerUrl: string | null;
  /** Ingest only the catalogue's hives' topics: a simulator shard's platform on a broker the other shards share. */
  readonly ownHivesOnly: boolean;
  /** The cloud's own login on an external broker (null: the embedded broker's fresh random secret per start). */
  readonly cloudCredentials: { readonly username: string; readonly password: string } | null;
  /** Serve the HTTP API over the store (null: no API). */
  readonly api: ServedApi | null;
  /**
   * A platform whose clock runs on its own (the wall clock of `occusim serve`) finalises its
   * minutes every this many ms; null when the owner of the clock calls `advanceTo`.
   */
  readonly advanceEveryMs: number | null;
  /** Webhook delivery (docs/webhooks.md); null: none. Plain data: the wall time is a local. */
  readonly webhooks: Omit<PlatformWebhookOptions, 'wallTime'> | null;
  /** One of several ingest processes (docs/scale-out.md): their MQTT shared-subscription group. */
  readonly shareGroup: string | null;
  /** One of several ingest processes: the floors it aggregates (ingest-partition.ts). */
  readonly partition: IngestPartition | null;
  /**
   * Driven by this many simulator shards over the broker's clock channel (broker/shard-clock.ts)
   * instead of `advanceTo`: the clock follows the slowest shard. Null: not shard-driven.
   */
  readonly shardClocks: number | null;
  /** With `partition` on a PostgreSQL store: the partition lease's duration, wall ms (docs/scale-out.md, Failover). */
  readonly leaseMs: number;
  /** A run's `store_restart` and `ingest_kill` faults, on the driven clock (platform-faults.ts); null: none. */
  readonly faults: PlatformFaultTimes | null;
  /**
   * How late data may still change a minute, ms: a minute is finalised (computed, stored, its
   * events sent) once its end is this far behind the clock (`--lookback`; docs/occupancy.md).
   */
  readonly lookbackMs: number;
}

/**
 * The platform's settings a user sets the same way for a run and for `occusim serve` (the CLI's
 * flags, `RunOptions.platform`): they pass through both unchanged into `platformConfig`, so a
 * new one is written here, where it is used, and as its flag (cli/options.ts `platformSettingsOf`).
 */
export type PlatformSettings = Partial<Pick<PlatformConfig, 'lookbackMs'>>;

/** What a platform's start takes besides its config, and cannot cross a thread: its clock and callbacks. */
export interface PlatformLocals {
  /**
   * The platform's clock: one that runs on its own (the wall clock of `occusim serve`), or
   * absent: a virtual clock from `startMs` that only `setTime`/`advanceTo` move (a run drives it).
   */
  clock?: Clock;
  /**
   * Sees every message the embedded broker accepts, with the platform's time then (capture
   * recording). The platform's clock, not the simulator's: at `--speed max` the simulator's
   * runs ahead of the deliveries by a thread-timing-dependent amount, while the platform's
   * reads the delivery's instant (what the store records as received), so a capture is the
   * same bytes run after run.
   */
  onPublish?: (topic: string, payload: Buffer, atMs: number) => void;
  /** Ownership changes (partition acquired, lost, finished), one line each. */
  onLeaseLog?: (line: string) => void;
}

/** What a caller says of a platform: the organisations and the sensors' grid, the rest optional with its default. */
export type PlatformConfigInput = Pick<PlatformConfig, 'organisations' | 'tickMs'> &
  Partial<Omit<PlatformConfig, 'organisations' | 'tickMs' | 'mqtt'>> & {
    readonly mqtt?: { readonly port?: number; readonly host?: string | null };
  };

/** Most simulator shards one platform follows (a shard is a process: thousands would be a typo). */
export const MAX_SHARD_CLOCKS = 1024;

/** A platform's config from what its entry point was given: defaults, validation (USAGE), frozen. */
export function platformConfig(input: PlatformConfigInput): PlatformConfig {
  const config: PlatformConfig = {
    organisations: input.organisations,
    startMs: input.startMs ?? 0,
    tickMs: positive('tick', input.tickMs),
    store: input.store ?? null,
    removeTemporaryStore: input.removeTemporaryStore ?? false,
    storePolicy: input.storePolicy ?? 'new',
    runKey: input.runKey ?? '',
    runEndMs: input.runEndMs ?? null,
    mqtt: Object.freeze({ port: mqttPort(input.mqtt?.port ?? 0), host: input.mqtt?.host ?? null }),
    brokerUrl: input.brokerUrl ?? null,
    ownHivesOnly: input.ownHivesOnly ?? false,
    cloudCredentials: input.cloudCredentials ?? null,
    api: input.api ?? null,
    advanceEveryMs: input.advanceEveryMs == null ? null : positive('advance interval', input.advanceEveryMs),
    webhooks: input.webhooks ?? null,
    shareGroup: input.shareGroup ?? null,
    partition: input.partition ?? null,
    shardClocks: input.shardClocks == null ? null : shardClocks(input.shardClocks),
    leaseMs: positive('lease', input.leaseMs ?? DEFAULT_LEASE_MS),
    faults: input.faults ?? null,
    lookbackMs: lookback(input.lookbackMs ?? DEFAULT_LOOKBACK_MS),
  };
  return Object.freeze(config);
}

function positive(what: string, ms: number): number {
  if (!(Number.isFinite(ms) && ms > 0))
    throw new AppError(ErrorCodes.USAGE, `${what} must be a positive number of ms, got ${ms}`);
  return ms;
}

/** A day: open minutes are held in memory until finalised, so the window is bounded. */
export const MAX_LOOKBACK_MS = 24 * 60 * MINUTE_MS;

function lookback(ms: number): number {
  if (!(Number.isInteger(ms) && ms >= MINUTE_MS && ms <= MAX_LOOKBACK_MS && ms % MINUTE_MS === 0))
    throw new AppError(ErrorCodes.USAGE, `lookback must be whole minutes from 1m to 24h, got ${ms} ms`);
  return ms;
}

/** A broker port, 0..65535 (0: a free one); anything else is the caller's mistake. */
export function mqttPort(p: number): number {
  if (!Number.isInteger(p) || p < 0 || p > 65535)
    throw new AppError(ErrorCodes.USAGE, `mqtt port must be an integer in 0..65535, got ${p}`);
  return p;
}

function shardClocks(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_SHARD_CLOCKS)
    throw new AppError(ErrorCodes.USAGE, `shards must be an integer in 1..${MAX_SHARD_CLOCKS}, got ${n}`);
  return n;
}
