import { DEFAULT_AUDIENCE, startApiServer } from '../api/server.js';
import { storeSeries } from '../api/reporting/store-series.js';
import { SqliteApiState } from '../api/state/sqlite-state.js';
import { SqliteStore } from '../cloud/store/sqlite-store.js';
import { systemClock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { PlatformReady } from '../run/options.js';
import { startPlatform } from '../run/platform.js';
import type { Flags, Io } from './commands.js';

/**
 * `occusim serve --scenario s [--db f] [--port N] [--mqtt-port N] [--audience A]` and the
 * tail of `occusim run --serve`: the platform alone — embedded broker, cloud ingest into the
 * store, and the HTTP API over the same store — until SIGINT or SIGTERM. Prints one line per
 * listener and the scenario's seeded credentials.
 */
export interface ServeOptions {
  dbPath: string | null;
  port: number;
  mqttPort: number;
  audience: string;
}

export function serveOptions(flags: Flags): ServeOptions {
  const port = (name: 'port' | 'mqtt-port', fallback: number): number => {
    const v = flags[name];
    if (typeof v !== 'string') return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new AppError(ErrorCodes.USAGE, `--${name} must be an integer in 0..65535, got ${JSON.stringify(v)}`);
    return n;
  };
  return {
    dbPath: typeof flags.db === 'string' ? flags.db : null,
    port: port('port', 8080),
    mqttPort: port('mqtt-port', 1883),
    audience: typeof flags.audience === 'string' ? flags.audience : DEFAULT_AUDIENCE,
  };
}

export async function serveCommand(flags: Flags, io: Io, signal: AbortSignal = serveSignal()): Promise<number> {
  if (typeof flags.scenario !== 'string') throw new AppError(ErrorCodes.USAGE, 'occusim serve needs --scenario <file>: its organisation, assets, users and clients');
  const loaded = loadScenarioFile(flags.scenario);
  if (!loaded.ok) throw new AppError(ErrorCodes.SCENARIO_INVALID, `invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`);
  return serveModel(loaded.model, serveOptions(flags), io, signal);
}

export async function serveModel(model: ScenarioModel, opts: ServeOptions, io: Io, signal: AbortSignal): Promise<number> {
  const platform = await startPlatform(model, systemClock, { dbPath: opts.dbPath, mqttPort: opts.mqttPort, connectHives: false });
  try {
    const session = serveDuringRun(opts, io);
    try {
      await session.start({ model, dbPath: platform.dbPath, brokerUrl: platform.broker.url });
      await untilAborted(signal);
    } finally {
      await session.close();
    }
  } finally {
    await platform.close();
  }
  return 0;
}

/**
 * The HTTP API over a running platform's store (`occusim run --serve`, `serve --feed`): started
 * when the platform is up, so a real-time run can be queried while it runs, and closed after.
 */
export interface ServeSession {
  start(ready: PlatformReady): Promise<void>;
  close(): Promise<void>;
}

export function serveDuringRun(opts: ServeOptions, io: Io): ServeSession {
  let store: SqliteStore | null = null;
  let state: SqliteApiState | null = null;
  let series: ReturnType<typeof storeSeries> | null = null;
  let api: Awaited<ReturnType<typeof startApiServer>> | null = null;
  return {
    async start({ model, dbPath, brokerUrl }): Promise<void> {
      // A second connection: the cloud writes through its own, WAL lets this one read meanwhile.
      store = new SqliteStore(dbPath);
      state = new SqliteApiState(dbPath);
      // With the file path, reporting reads minutes through its own read-only connection (faster).
      series = storeSeries(store, [model], { dbPath });
      api = await startApiServer({ models: [model], port: opts.port, audience: opts.audience, series, state, status: store });
      io.stdout.write(`api listening on ${api.url}\nmqtt listening on ${brokerUrl}\n`);
      io.stdout.write(`store ${dbPath}; audience ${opts.audience}\n`);
      for (const c of model.clients) io.stdout.write(`client ${c.name}: client_id ${c.clientId} client_secret ${c.secret}\n`);
      for (const u of model.users) io.stdout.write(`user ${u.username}: password ${u.password}\n`);
    },
    async close(): Promise<void> {
      await api?.close();
      series?.close();
      state?.close();
      store?.close();
      api = null;
      series = null;
      state = null;
      store = null;
    },
  };
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
