import { Option } from 'commander';
import { AppError, ErrorCodes } from '../core/errors.js';
import {
  DEFAULT_WEBHOOK_CONCURRENCY,
  MAX_WEBHOOK_CONCURRENCY,
  MIN_WEBHOOK_CONCURRENCY,
  concurrencyProblem,
} from '../webhooks/concurrency.js';
import { allowedHostName } from '../api/host-guard.js';
import { metricsTokenProblem } from '../api/metrics.js';
import {
  DEFAULT_WEBHOOK_TIMESTAMPS,
  WEBHOOK_TIMESTAMPS,
  webhookTimestampsOf,
  type WebhookTimestamps,
} from '../webhooks/timestamps.js';
import type { Flags } from './io.js';
import { parseDuration } from '../core/time.js';
import type { PlatformSettings } from '../platform/config.js';
import { parseWebhookFaults, type WebhookFaults } from '../webhooks/faults.js';
import { parseWebhookStorm, type WebhookStorm } from '../webhooks/storm.js';

/**
 * Every option of the command line, defined once: a command lists the ones it takes, so its
 * help is generated from these and an option of another command is refused. Defaults live
 * here too (one per option, whichever command reads it), applied by the readers below rather
 * than by the parser so a command can tell a given option from a default.
 */

/** Embedded MQTT broker port: a free port unless told (printed on start; a device uses `--mqtt-port 1883`). */
export const DEFAULT_MQTT_PORT = 0;
/** HTTP API port of `serve` and `run --serve`. */
export const DEFAULT_API_PORT = 8080;
/** Address every listener binds (broker, API, webhook receiver); `--host 0.0.0.0` for devices on the network. */
export const DEFAULT_HOST = '127.0.0.1';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export const OPTIONS = {
  // A run and what it simulates
  seed: () => new Option('--seed <n>', "override the scenario's seed"),
  speed: () => new Option('--speed <max|F>', 'max (default): virtual time, deterministic; F: F× real time'),
  duration: () => new Option('--duration <d>', "override the scenario's duration (90s, 30m, 2h, 1h30m, 1d)"),
  faults: () =>
    new Option(
      '--faults <schedule>',
      "replace the scenario's faults: block with a schedule, e.g. 'hive_outage@10m+5m:hive=Hive 1; broker_restart@20m' (docs/scenario-format.md, \"Fault schedules\")",
    ),
  start: () =>
    new Option(
      '--start <t>',
      "override the start: site-local 2026-11-23T08:00, with Z or an offset (clock times stay), or 'now' (the scenario's timeline moved onto the current minute)",
    ),
  fidelity: () =>
    new Option('--fidelity <f>', 'model (statistical sensors) or frame (thermal frames + edge detection)').choices([
      'model',
      'frame',
    ]),
  workers: () => new Option('--workers <n>', 'worker threads for frame fidelity (0: main thread; results identical)'),
  report: () =>
    new Option('--report <file>', 'write the JSON report { scenario, seed, result, perf, db, expectations }'),
  store: () =>
    new Option(
      '--store <sqlite:FILE|postgres://…>',
      'the cloud store (a run without it: a temporary file deleted at exit; a store holding a run needs --resume or --fresh)',
    ),
  db: () => new Option('--db <file>', 'the cloud store as a SQLite file (alias of --store sqlite:FILE)'),
  keep: () => new Option('--keep', 'keep the temporary store (deleted at exit without --store/--db/--keep)'),
  resume: () => new Option('--resume', 'continue the run held by --store (same scenario and seed)'),
  fresh: () => new Option('--fresh', 'delete what --store holds and start over'),
  platformThread: () =>
    new Option('--platform-thread <mode>', 'auto (default: its own thread from 1,000 sensors), on or off').choices([
      'auto',
      'on',
      'off',
    ]),
  hiveThreads: () =>
    new Option(
      '--hive-threads <n>',
      'worker threads that simulate the hives (auto: default, one per core beyond the first from 1,000 sensors; 0: the run\u2019s thread; results identical)',
    ),
  shard: () =>
    new Option(
      '--shard <i/n>',
      'simulate only slice i of n of the hives (dealt by serial), on the --broker the other shards share',
    ),
  broker: () => new Option('--broker <url>', 'an external MQTT broker (mqtt://host:port) instead of the embedded one'),
  externalIngest: () =>
    new Option(
      '--external-ingest',
      'with --shard: no platform of its own; occusim serve --shards processes on the --broker ingest, told the time on its clock channel (docs/scale-out.md)',
    ),
  shareGroup: () =>
    new Option(
      '--share-group <g>',
      'serve: one of several ingest processes sharing the uplinks through $share/<g>/… on the --broker',
    ),
  partition: () =>
    new Option(
      '--partition <j/k>',
      'serve: aggregate only the floors of partition j of k (every process stores and acks what it receives); on PostgreSQL held by lease, with failover',
    ),
  leaseMs: () =>
    new Option(
      '--lease-ms <ms>',
      'serve --partition on PostgreSQL: wall ms a process may be silent before another takes its partitions (default 10000)',
    ),
  shards: () =>
    new Option(
      '--shards <n>',
      'serve: driven by n simulator shards (run --shard i/n --external-ingest) over the broker: their clock, then done',
    ),
  record: () => new Option('--record <file>', 'write every MQTT message to a capture (.occap; embedded broker only)'),
  quiet: () => new Option('--quiet', 'no progress bar, no summary'),
  expect: () =>
    new Option(
      '--expect <threshold>',
      'a threshold judged at the end, repeatable: rooms.mae<0.5, latency.p99<15s, messages.lost==0 (exit 1 when one fails)',
    ).argParser(collect),
  junit: () =>
    new Option('--junit <file>', 'write JUnit XML: one test case per threshold (run) or conformance rule (check)'),
  // Listeners
  serve: () =>
    new Option('--serve', 'serve the API and MQTT from the run\u2019s start and after its end, until Ctrl-C'),
  port: () => new Option('--port <n>', `HTTP API port (default ${DEFAULT_API_PORT}; 0: a free port)`),
  mqttPort: () =>
    new Option('--mqtt-port <n>', `embedded MQTT broker port (default ${DEFAULT_MQTT_PORT}: a free port, printed)`),
  host: () =>
    new Option(
      '--host <address>',
      `address the listeners bind (default ${DEFAULT_HOST}; 0.0.0.0: every interface, for devices on the network)`,
    ),
  audience: () =>
    new Option('--audience <a>', 'API identifier accepted in client logins (default https://api.occusim.local)'),
  lookback: () =>
    new Option(
      '--lookback <d>',
      'how late data may still change a minute: whole minutes, 1m..24h (default 5m, the spec\u2019s recompute window; docs/occupancy.md)',
    ),
  webhookAllow: () =>
    new Option(
      '--webhook-allow <cidrs>',
      'webhook destinations allowed although loopback or private, comma-separated (docs/webhooks.md)',
    ),
  webhookConcurrency: () =>
    new Option(
      '--webhook-concurrency <n>',
      `webhook requests in flight per subscription, ${MIN_WEBHOOK_CONCURRENCY}..${MAX_WEBHOOK_CONCURRENCY} (default ${DEFAULT_WEBHOOK_CONCURRENCY}; a scenario's webhooks[].concurrency wins; docs/webhooks.md)`,
    ),
  webhookFaults: () =>
    new Option(
      '--webhook-faults <spec>',
      "delivery faults on purpose for every subscription without its own, seeded: 'duplicate=0.05,reorder=0.1/4,delay=0.1/50-500,burst=0.05/8/500,revise=0.2,timeout=0.01' (docs/load-testing.md)",
    ),
  webhookStorm: () =>
    new Option(
      '--webhook-storm <spec>',
      "event-storm mode for every subscription without its own: RATE events per simulated second, optionally of some of its types, e.g. '5000' or '5000/DETECTIONS+ROOM_OCCUPANCY_1M' (docs/load-testing.md)",
    ),
  ramp: () =>
    new Option(
      '--ramp <steps>',
      "share of the hives online over simulated time, e.g. '0:10%,5m:50%,10m:100%' (replaces the scenario's ramp:; docs/load-testing.md, \"Ramps\")",
    ),
  consumerExpect: () =>
    new Option(
      '--consumer-expect <file>',
      'write the state a correct consumer of each subscription must hold, truth beside it, NDJSON (occusim consumer-verify; docs/load-testing.md)',
    ),
  webhookTimestamps: () =>
    new Option(
      '--webhook-timestamps <clock>',
      `what webhook-timestamp carries: ${WEBHOOK_TIMESTAMPS.join(' or ')} (default ${DEFAULT_WEBHOOK_TIMESTAMPS}: standard verifiers accept it; simulated: byte-identical requests, which they reject; docs/webhooks.md)`,
    ),
  scenario: () => new Option('--scenario <file>', 'the scenario file (or a shipped scenario by name, e.g. quickstart)'),
  graphiql: () => new Option('--no-graphiql', 'with --serve (and serve): no GraphQL IDE page at /api/graphiql'),
  metricsToken: () =>
    new Option(
      '--metrics-token <token>',
      'with --serve (and serve): the bearer token a scraper sends to see /metrics per organisation, hive and subscription (without it: platform totals only; docs/metrics.md)',
    ),
  allowedHost: () =>
    new Option(
      '--allowed-host <name>',
      'with --serve (and serve): a host name the API answers besides its address and localhost, repeatable (a reverse proxy\u2019s; docs/security.md)',
    ).argParser(collect),
  // Output
  truth: () =>
    new Option(
      '--truth <file>',
      'write the ground truth: per-minute true counts per space and every door crossing, NDJSON (docs/report.md)',
    ),
  html: () => new Option('--html <file>', 'write a self-contained HTML report with plots (docs/report.md)'),
  json: () => new Option('--json', 'print JSON on stdout instead of text'),
} as const;

export type OptionName = keyof typeof OPTIONS;

/** The options of a run (`run`, `serve --feed`). */
export const RUN_OPTIONS: readonly OptionName[] = [
  'seed',
  'speed',
  'duration',
  'start',
  'faults',
  'ramp',
  'fidelity',
  'workers',
  'report',
  'store',
  'db',
  'keep',
  'resume',
  'fresh',
  'platformThread',
  'hiveThreads',
  'mqttPort',
  'host',
  'lookback',
  'broker',
  'record',
  'quiet',
  'expect',
  'junit',
  'webhookAllow',
  'webhookConcurrency',
  'webhookTimestamps',
  'webhookFaults',
  'webhookStorm',
  'consumerExpect',
  'truth',
  'html',
];

function portValue(flags: Flags, name: 'port' | 'mqtt-port', fallback: number): number {
  const v = flags[name];
  if (typeof v !== 'string') return fallback;
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new AppError(ErrorCodes.USAGE, `--${name} must be an integer in 0..65535, got ${JSON.stringify(v)}`);
  return n;
}

export const mqttPortOf = (flags: Flags): number => portValue(flags, 'mqtt-port', DEFAULT_MQTT_PORT);
export const apiPortOf = (flags: Flags): number => portValue(flags, 'port', DEFAULT_API_PORT);
/** `--webhook-concurrency`: undefined when not given (the platform's default applies). */
export function webhookConcurrencyOf(flags: Flags): number | undefined {
  const v = flags['webhook-concurrency'];
  if (typeof v !== 'string') return undefined;
  const n = v.trim() === '' ? Number.NaN : Number(v);
  if (concurrencyProblem(n) !== null)
    throw new AppError(
      ErrorCodes.USAGE,
      `--webhook-concurrency must be an integer in ${MIN_WEBHOOK_CONCURRENCY}..${MAX_WEBHOOK_CONCURRENCY}, got ${JSON.stringify(v)}`,
    );
  return n;
}

/**
 * The platform's settings from their flags, for a run and for `serve` alike; each is validated
 * by the platform's config (platform/config.ts), which names the value.
 */
export function platformSettingsOf(flags: Flags): PlatformSettings {
  const settings: { -readonly [K in keyof PlatformSettings]: PlatformSettings[K] } = {};
  if (typeof flags.lookback === 'string') {
    const ms = parseDuration(flags.lookback);
    if (ms === null)
      throw new AppError(
        ErrorCodes.USAGE,
        `--lookback must be a duration such as 5m or 1h, got ${JSON.stringify(flags.lookback)}`,
      );
    settings.lookbackMs = ms;
  }
  return settings;
}

/** `--metrics-token`: undefined when not given; refused when too short, too long or not a bearer token. */
export function metricsTokenOf(flags: Flags): string | undefined {
  const v = flags['metrics-token'];
  if (typeof v !== 'string') return undefined;
  const problem = metricsTokenProblem(v);
  if (problem !== null) throw new AppError(ErrorCodes.USAGE, problem);
  return v;
}

/** `--allowed-host`, repeatable and comma-separated, each checked (host-guard.ts). */
export function allowedHostsOf(flags: Flags): string[] {
  const v = flags['allowed-host'];
  const given = Array.isArray(v)
    ? v.filter((x): x is string => typeof x === 'string')
    : typeof v === 'string'
      ? [v]
      : [];
  return given.flatMap((x) => x.split(',')).map((x) => allowedHostName(x));
}

/** `--webhook-timestamps`: undefined when not given (the platform's default, wall, applies). */
export function webhookTimestampsFlag(flags: Flags): WebhookTimestamps | undefined {
  const v = flags['webhook-timestamps'];
  if (typeof v !== 'string') return undefined;
  const t = webhookTimestampsOf(v);
  if (t === null)
    throw new AppError(
      ErrorCodes.USAGE,
      `--webhook-timestamps must be ${WEBHOOK_TIMESTAMPS.join(' or ')}, got ${JSON.stringify(v)}`,
    );
  return t;
}

/** `--webhook-faults`: undefined when not given (webhooks/faults.ts). */
export function webhookFaultsFlag(flags: Flags): WebhookFaults | undefined {
  const v = flags['webhook-faults'];
  if (typeof v !== 'string') return undefined;
  const parsed = parseWebhookFaults(v);
  if (!parsed.ok) throw new AppError(ErrorCodes.USAGE, `--webhook-faults, column ${parsed.col}: ${parsed.message}`);
  return parsed.faults;
}

/** `--webhook-storm`: undefined when not given (webhooks/storm.ts). */
export function webhookStormFlag(flags: Flags): WebhookStorm | undefined {
  const v = flags['webhook-storm'];
  if (typeof v !== 'string') return undefined;
  const parsed = parseWebhookStorm(v);
  if (!parsed.ok) throw new AppError(ErrorCodes.USAGE, `--webhook-storm, column ${parsed.col}: ${parsed.message}`);
  return parsed.storm;
}

export const hostOf = (flags: Flags): string =>
  typeof flags.host === 'string' && flags.host !== '' ? flags.host : DEFAULT_HOST;
