import { DEFAULT_AUDIENCE } from '../api/server.js';
import { organisationsFromScenario } from '../assets/from-scenario.js';
import { AssetCatalogue } from '../assets/catalogue.js';
import { systemClock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { MINUTE_MS } from '../core/time.js';
import { startPlatform } from '../platform/platform.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { PlatformReady } from '../run/options.js';
import { declaredWebhooks } from '../run/run-scenario.js';
import type { Flags, Io } from './io.js';
import { storeFlag } from './store-flag.js';
import { formatHiveCredentials } from './credentials.js';
import { apiPortOf, hostOf, mqttPortOf } from './options.js';

/**
 * `occusim serve --scenario s [--db f] [--port N] [--mqtt-port N] [--audience A]`: the
 * platform alone — embedded broker, cloud ingest into the store, and the HTTP API over the
 * same store — until SIGINT or SIGTERM, on the wall clock: what hives publish becomes
 * occupancy minute by minute. Prints one line per listener and the scenario's seeded
 * credentials. A served store is kept across restarts (`--db`): serving it again resumes it.
 */
export interface ServeOptions {
  dbPath: string | null;
  port: number;
  mqttPort: number;
  audience: string;
  /** Interface the broker and the API bind (`--host`). */
  host: string;
  /** CIDR blocks webhooks may reach although loopback or private (`--webhook-allow`). */
  webhookAllow: string[];
  /** The GraphQL IDE page (`--no-graphiql` turns it off). */
  graphiql: boolean;
}

/** How often a platform on the wall clock finalises its minutes (well within a minute). */
const OWN_CLOCK_ADVANCE_MS = 5_000;

export function serveOptions(flags: Flags): ServeOptions {
  return {
    dbPath: storeFlag(flags),
    port: apiPortOf(flags),
    mqttPort: mqttPortOf(flags),
    host: hostOf(flags),
    audience: typeof flags.audience === 'string' ? flags.audience : DEFAULT_AUDIENCE,
    webhookAllow: typeof flags['webhook-allow'] === 'string' ? flags['webhook-allow'].split(',').map((c) => c.trim()) : [],
    // Commander keeps a negated option under its long name: true unless --no-graphiql was given.
    graphiql: flags['no-graphiql'] !== false,
  };
}

/** Options of a run that mean nothing to a platform served alone (they need `--feed`). */
const FEED_ONLY = ['seed', 'speed', 'duration', 'start', 'fidelity', 'workers', 'report', 'keep', 'resume', 'fresh', 'platform-thread', 'hive-threads', 'broker', 'record', 'quiet', 'expect', 'junit'];

export async function serveCommand(flags: Flags, io: Io, signal?: AbortSignal): Promise<number> {
  if (typeof flags.scenario !== 'string') throw new AppError(ErrorCodes.USAGE, 'occusim serve needs --scenario <file>: its organisation, assets, users and clients');
  const foreign = FEED_ONLY.find((name) => flags[name] !== undefined);
  if (foreign !== undefined) throw new AppError(ErrorCodes.USAGE, `--${foreign} is an option of a run: use occusim serve --feed (the platform fed by the scenario) or occusim run`);
  const loaded = loadScenarioFile(flags.scenario);
  if (!loaded.ok) throw new AppError(ErrorCodes.SCENARIO_INVALID, `invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`);
  const opts = serveOptions(flags);
  return serveModel(loaded.model, opts, io, signal ?? serveSignal());
}

export async function serveModel(model: ScenarioModel, opts: ServeOptions, io: Io, signal: AbortSignal): Promise<number> {
  const platform = await startPlatform({
    catalogue: new AssetCatalogue(organisationsFromScenario(model)),
    clock: systemClock,
    tickMs: model.tickMs,
    dbPath: opts.dbPath,
    storePolicy: 'resume',
    runKey: `serve|${model.name}|${model.seed}`,
    mqttPort: opts.mqttPort,
    mqttHost: opts.host,
    api: { port: opts.port, host: opts.host, audience: opts.audience, graphiql: opts.graphiql },
    advanceEveryMs: Math.min(OWN_CLOCK_ADVANCE_MS, MINUTE_MS),
    // Always on: subscriptions created through GraphQL are delivered on the wall clock.
    webhooks: { seed: model.seed, allow: [...(model.webhookAllow ?? []), ...opts.webhookAllow], declared: declaredWebhooks(model) },
  });
  try {
    printListeners(io, { model, dbPath: platform.dbPath, brokerUrl: platform.brokerUrl, apiUrl: platform.apiUrl }, opts.audience);
    await untilAborted(signal);
  } finally {
    await platform.close();
  }
  return 0;
}

/** One line per listener, then the scenario's seeded credentials (`run --serve`, `serve`). */
export function printListeners(io: Io, ready: PlatformReady, audience: string): void {
  io.stdout.write(`api listening on ${ready.apiUrl ?? '(no api)'}\nmqtt listening on ${ready.brokerUrl}\n`);
  if (ready.apiUrl) io.stdout.write(`browse: ${ready.apiUrl}/api/docs (REST, try it out), ${ready.apiUrl}/api/graphiql (GraphQL IDE unless --no-graphiql), ${ready.apiUrl}/metrics (Prometheus), ${ready.apiUrl}/live (a served run's floor plan)\n`);
  io.stdout.write(`store ${ready.dbPath}; audience ${audience}\n`);
  for (const c of ready.model.clients) io.stdout.write(`client ${c.name}: client_id ${c.clientId} client_secret ${c.secret}\n`);
  for (const u of ready.model.users) io.stdout.write(`user ${u.username}: password ${u.password}\n`);
  io.stdout.write(formatHiveCredentials(ready.model));
}

export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** Aborted by SIGINT or SIGTERM (Ctrl-C ends `serve` cleanly). */
export function serveSignal(): AbortSignal {
  const ctl = new AbortController();
  const stop = (): void => ctl.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return ctl.signal;
}
