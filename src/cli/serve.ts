import { DEFAULT_AUDIENCE } from '../api/server.js';
import { organisationsFromScenario } from '../assets/from-scenario.js';
import { systemClock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { MINUTE_MS } from '../core/time.js';
import { startPlatform, type Platform, type ServedApi } from '../platform/platform.js';
import { parsePartition, type IngestPartition } from '../platform/ingest-partition.js';
import { parseLeaseMs } from '../platform/partition-leases.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { PlatformReady } from '../run/options.js';
import { declaredWebhooks } from '../run/run-platform.js';
import { platformConfig, type PlatformConfig, type PlatformSettings } from '../platform/config.js';
import type { Flags, Io } from './io.js';
import { storeFlag } from './store-flag.js';
import type { StoreLocation } from '../store/location.js';
import { formatHiveCredentials } from './credentials.js';
import {
  allowedHostsOf,
  apiPortOf,
  hostOf,
  metricsTokenOf,
  mqttPortOf,
  platformSettingsOf,
  webhookConcurrencyOf,
  webhookFaultsFlag,
  webhookStormFlag,
  webhookTimestampsFlag,
} from './options.js';
import type { WebhookFaults } from '../webhooks/faults.js';
import type { WebhookStorm } from '../webhooks/storm.js';
import { SIMULATED_TIMESTAMPS_WARNING, type WebhookTimestamps } from '../webhooks/timestamps.js';

/**
 * `occusim serve --scenario s [--db f] [--port N] [--mqtt-port N] [--audience A]`: the
 * platform alone — embedded broker, cloud ingest into the store, and the HTTP API over the
 * same store — until SIGINT or SIGTERM, on the wall clock: what hives publish becomes
 * occupancy minute by minute. Prints one line per listener and the scenario's seeded
 * credentials. A served store is kept across restarts (`--db`): serving it again resumes it.
 */
export interface ServeOptions {
  /** `--store`/`--db`, parsed once (cli/store-flag.ts); null: a temporary SQLite file. */
  store: StoreLocation | null;
  port: number;
  mqttPort: number;
  audience: string;
  /** Interface the broker and the API bind (`--host`). */
  host: string;
  /** CIDR blocks webhooks may reach although loopback or private (`--webhook-allow`). */
  webhookAllow: string[];
  /** Webhook requests in flight per subscription (`--webhook-concurrency`); undefined: the default. */
  webhookConcurrency?: number;
  /** What `webhook-timestamp` carries (`--webhook-timestamps`); undefined: the default (wall). */
  webhookTimestamps?: WebhookTimestamps;
  /** Delivery faults of subscriptions without their own (`--webhook-faults`; docs/load-testing.md). */
  webhookFaults?: WebhookFaults;
  /** Storm of subscriptions without their own (`--webhook-storm`; docs/load-testing.md). */
  webhookStorm?: WebhookStorm;
  /** The GraphQL IDE page (`--no-graphiql` turns it off). */
  graphiql: boolean;
  /** The platform's settings from their flags (`--lookback`, …; cli/options.ts). */
  platform: PlatformSettings;
  /** `--metrics-token`: the operator's scraper sees /metrics per tenant with it. */
  metricsToken?: string;
  /** `--allowed-host`: names the API answers besides its address and loopback. */
  allowedHosts: string[];
  /** Several ingest processes (docs/scale-out.md): an external broker, its share group, this process's floors, the shards that drive its clock. */
  scaleOut: ScaleOut | null;
}

export interface ScaleOut {
  brokerUrl: string;
  shareGroup?: string;
  partition?: IngestPartition;
  /** Driven by this many simulator shards' clocks (absent: the wall clock). */
  shards?: number;
  /** `--lease-ms`: the partition lease's duration (PostgreSQL stores; docs/scale-out.md, Failover). */
  leaseMs?: number;
}

/** The API a platform serves, from the command line's options (`serve`, `run --serve`). */
export function servedApi(opts: ServeOptions): ServedApi {
  return {
    port: opts.port,
    host: opts.host,
    audience: opts.audience,
    graphiql: opts.graphiql,
    allowedHosts: opts.allowedHosts,
    ...(opts.metricsToken !== undefined ? { metricsToken: opts.metricsToken } : {}),
  };
}

/** How often a platform on the wall clock finalises its minutes (well within a minute). */
const OWN_CLOCK_ADVANCE_MS = 5_000;

export function serveOptions(flags: Flags): ServeOptions {
  const webhookConcurrency = webhookConcurrencyOf(flags);
  const metricsToken = metricsTokenOf(flags);
  const webhookTimestamps = webhookTimestampsFlag(flags);
  const webhookFaults = webhookFaultsFlag(flags);
  const webhookStorm = webhookStormFlag(flags);
  return {
    ...(webhookStorm !== undefined ? { webhookStorm } : {}),
    ...(webhookFaults !== undefined ? { webhookFaults } : {}),
    ...(webhookConcurrency !== undefined ? { webhookConcurrency } : {}),
    ...(webhookTimestamps !== undefined ? { webhookTimestamps } : {}),
    ...(metricsToken !== undefined ? { metricsToken } : {}),
    allowedHosts: allowedHostsOf(flags),
    store: storeFlag(flags),
    port: apiPortOf(flags),
    mqttPort: mqttPortOf(flags),
    host: hostOf(flags),
    audience: typeof flags.audience === 'string' ? flags.audience : DEFAULT_AUDIENCE,
    webhookAllow:
      typeof flags['webhook-allow'] === 'string' ? flags['webhook-allow'].split(',').map((c) => c.trim()) : [],
    // Commander keeps a negated option under its long name: true unless --no-graphiql was given.
    graphiql: flags['no-graphiql'] !== false,
    scaleOut: scaleOutOf(flags),
    platform: platformSettingsOf(flags),
  };
}

/** `--broker`, `--share-group`, `--partition j/k`, `--shards n`: the last three only on an external broker. */
function scaleOutOf(flags: Flags): ScaleOut | null {
  const needsBroker = (['share-group', 'partition', 'shards', 'lease-ms'] as const).find(
    (name) => flags[name] !== undefined,
  );
  if (typeof flags.broker !== 'string') {
    if (needsBroker !== undefined)
      throw new AppError(
        ErrorCodes.USAGE,
        `--${needsBroker} needs --broker mqtt://…: the broker the ingest processes and the shards share`,
      );
    return null;
  }
  const out: ScaleOut = { brokerUrl: flags.broker };
  if (typeof flags['share-group'] === 'string') {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(flags['share-group']))
      throw new AppError(
        ErrorCodes.USAGE,
        `--share-group must be 1–64 letters, digits, _ or -, got ${JSON.stringify(flags['share-group'])}`,
      );
    out.shareGroup = flags['share-group'];
  }
  if (typeof flags.partition === 'string') {
    if (out.shareGroup === undefined)
      throw new AppError(
        ErrorCodes.USAGE,
        '--partition needs --share-group: without it every process receives every batch',
      );
    out.partition = parsePartition(flags.partition);
  } else if (out.shareGroup !== undefined) {
    // Each member would aggregate the part of a floor it happens to receive: inexact occupancy.
    throw new AppError(
      ErrorCodes.USAGE,
      '--share-group needs --partition j/k (1/1 for one process): each process aggregates only its floors',
    );
  }
  if (typeof flags['lease-ms'] === 'string') {
    if (out.partition === undefined)
      throw new AppError(ErrorCodes.USAGE, '--lease-ms needs --partition j/k: leases are held on floor partitions');
    out.leaseMs = parseLeaseMs(flags['lease-ms']);
  }
  if (typeof flags.shards === 'string') {
    const n = Number(flags.shards);
    if (!/^\d{1,6}$/.test(flags.shards) || n < 1)
      throw new AppError(ErrorCodes.USAGE, `--shards must be an integer ≥ 1, got ${JSON.stringify(flags.shards)}`);
    out.shards = n;
  }
  return out;
}

/** Options of a run that mean nothing to a platform served alone (they need `--feed`). */
const FEED_ONLY = [
  'seed',
  'speed',
  'duration',
  'start',
  'fidelity',
  'workers',
  'report',
  'keep',
  'resume',
  'fresh',
  'platform-thread',
  'hive-threads',
  'record',
  'quiet',
  'expect',
  'junit',
  'consumer-expect',
];

export async function serveCommand(flags: Flags, io: Io, signal?: AbortSignal): Promise<number> {
  if (typeof flags.scenario !== 'string')
    throw new AppError(
      ErrorCodes.USAGE,
      'occusim serve needs --scenario <file>: its organisation, assets, users and clients',
    );
  const foreign = FEED_ONLY.find((name) => flags[name] !== undefined);
  if (foreign !== undefined)
    throw new AppError(
      ErrorCodes.USAGE,
      `--${foreign} is an option of a run: use occusim serve --feed (the platform fed by the scenario) or occusim run`,
    );
  const loaded = loadScenarioFile(flags.scenario);
  if (!loaded.ok)
    throw new AppError(
      ErrorCodes.SCENARIO_INVALID,
      `invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`,
    );
  const opts = serveOptions(flags);
  // Listening for SIGTERM from here on (start-up included), and saying so: start-up is interruptible.
  const stop = signal ?? serveSignal();
  // stdout with the other status lines: stderr carries only problems (one line each, test/cli/problems.test.ts).
  io.stdout.write(`serve: starting ${loaded.model.organisations?.length ?? 1} organisation(s)\n`);
  // The process's own signals: a start-up cut short leaves nothing to drain (the store is
  // transactional and survives a kill), so the process ends at once instead of after the start
  // it no longer needs — whatever still holds the loop (a listener half opened).
  const exitNow =
    signal === undefined ? (): void => void setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref() : undefined;
  return serveModel(loaded.model, opts, io, stop, exitNow);
}

/** The served platform, built once from the scenario and the command's flags. */
function servePlatformConfig(model: ScenarioModel, opts: ServeOptions): PlatformConfig {
  const scale = opts.scaleOut;
  return platformConfig({
    ...opts.platform,
    organisations: organisationsFromScenario(model),
    ...(scale?.shards !== undefined
      ? { startMs: model.startMs, shardClocks: scale.shards }
      : { advanceEveryMs: Math.min(OWN_CLOCK_ADVANCE_MS, MINUTE_MS) }),
    ...(scale ? { brokerUrl: scale.brokerUrl } : {}),
    ...(scale?.shareGroup !== undefined ? { shareGroup: scale.shareGroup } : {}),
    ...(scale?.partition ? { partition: scale.partition } : {}),
    ...(scale?.leaseMs !== undefined ? { leaseMs: scale.leaseMs } : {}),
    tickMs: model.tickMs,
    store: opts.store,
    storePolicy: 'resume',
    runKey: `serve|${model.name}|${model.seed}`,
    mqtt: { port: opts.mqttPort, host: opts.host },
    api: servedApi(opts),
    // Always on: subscriptions created through GraphQL are delivered on the wall clock.
    webhooks: {
      seed: model.seed,
      allow: [...(model.webhookAllow ?? []), ...opts.webhookAllow],
      declared: declaredWebhooks(model),
      ...(opts.webhookConcurrency !== undefined ? { concurrency: opts.webhookConcurrency } : {}),
      ...(opts.webhookTimestamps !== undefined ? { timestamps: opts.webhookTimestamps } : {}),
      ...(opts.webhookFaults !== undefined ? { faults: opts.webhookFaults } : {}),
      ...(opts.webhookStorm !== undefined ? { storm: opts.webhookStorm } : {}),
    },
  });
}

/** Time for the last lines to reach stdout and stderr before a start-up cut short ends the process. */
const EXIT_GRACE_MS = 100;

export async function serveModel(
  model: ScenarioModel,
  opts: ServeOptions,
  io: Io,
  signal: AbortSignal,
  onStartAborted?: () => void,
): Promise<number> {
  const scale = opts.scaleOut;
  const own = scale?.shards === undefined;
  const starting = startPlatform(servePlatformConfig(model, opts), {
    // Driven by shards: a virtual clock from the scenario's start that only their clock channel moves.
    ...(own ? { clock: systemClock } : {}),
    onLeaseLog: (line) => void io.stdout.write(`${line}\n`),
  });
  // SIGTERM during start-up ends the process now (issue 33 item 8: a process outlived SIGTERM
  // by 28 minutes while it started): what started closes once its start completes, and the
  // CLI's entry point exits shortly after this returns whatever still holds the loop.
  const platform = await Promise.race([starting, untilAborted(signal).then(() => null)]);
  if (platform === null) {
    void starting.then(
      (p) => p.close(),
      () => undefined,
    );
    io.stdout.write('serve: stopped during start-up\n');
    onStartAborted?.();
    return 0;
  }
  try {
    printListeners(
      io,
      { model, dbPath: platform.dbPath, brokerUrl: platform.brokerUrl, apiUrl: platform.apiUrl },
      opts.audience,
    );
    if (opts.webhookTimestamps === 'simulated') io.stdout.write(`${SIMULATED_TIMESTAMPS_WARNING}\n`);
    if (platform.shardsFinished) await followShardsToTheEnd(platform, platform.shardsFinished, scale, io, signal);
    await untilAborted(signal);
  } finally {
    await platform.close();
  }
  return 0;
}

/** An ingest process following simulator shards: until every shard said done and every minute is final. */
async function followShardsToTheEnd(
  platform: Platform,
  finished: Promise<void>,
  scale: ScaleOut | null,
  io: Io,
  signal: AbortSignal,
): Promise<void> {
  const who = scale?.partition ? `partition ${scale.partition.index}/${scale.partition.count}` : 'process';
  io.stdout.write(`ingest ${who} following ${scale?.shards} shard clock(s)\n`);
  // A refused clock message or a failed round ends the process (exit 1 through the CLI's error mapping).
  await Promise.race([finished, untilAborted(signal)]);
  const c = await platform.reads.counters();
  const { batchesProcessed, duplicateBatches, packetsProcessed, deadLettered } = c;
  io.stdout.write(
    `shards done; every minute finalised: ${JSON.stringify({ batchesProcessed, duplicateBatches, packetsProcessed, deadLettered })}\n`,
  );
}

/** One line per listener, then the scenario's seeded credentials (`run --serve`, `serve`). */
export function printListeners(io: Io, ready: PlatformReady, audience: string): void {
  io.stdout.write(`api listening on ${ready.apiUrl ?? '(no api)'}\nmqtt listening on ${ready.brokerUrl}\n`);
  if (ready.apiUrl)
    io.stdout.write(
      `browse: ${ready.apiUrl}/api/docs (REST, try it out), ${ready.apiUrl}/api/graphiql (GraphQL IDE unless --no-graphiql), ${ready.apiUrl}/metrics (Prometheus), ${ready.apiUrl}/live (a served run's floor plan: sign in, or /live#token=<access token>)\n`,
    );
  io.stdout.write(`store ${ready.dbPath}; audience ${audience}\n`);
  for (const c of ready.model.clients)
    io.stdout.write(`client ${c.name}: client_id ${c.clientId} client_secret ${c.secret}\n`);
  for (const u of ready.model.users) io.stdout.write(`user ${u.username}: password ${u.password}\n`);
  io.stdout.write(formatHiveCredentials(ready.model));
}

export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

/** Aborted by SIGINT or SIGTERM (Ctrl-C ends `serve` cleanly). */
export function serveSignal(): AbortSignal {
  const ctl = new AbortController();
  const stop = (): void => ctl.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return ctl.signal;
}
