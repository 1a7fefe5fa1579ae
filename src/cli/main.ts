import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AppError, ErrorCodes, isAppError } from '../core/errors.js';
import { feedCommand, runCommand, schemaCommand, validateCommand, type Flags, type Io } from './commands.js';
import { framesCommand } from './frames.js';
import { checkCommand } from './check.js';
import { replayCommand } from './replay.js';
import { deadlettersCommand } from './deadletters.js';
import { serveCommand } from './serve.js';
import { receiveCommand } from './receive.js';
import { webhooksCommand } from './webhooks.js';
import { graphqlSchemaCommand } from '../api/graphql/sdl.js';

/**
 * `occusim` command line: a thin shell over the library API. Exit codes (DESIGN §3.1):
 * 0 ok, 1 a run found a failure condition, 2 usage or input error.
 */
const HELP = `occusim — deterministic simulator of a thermal people-sensing platform

Usage:
  occusim run <scenario> [options]   simulate end to end and compare with ground truth
  occusim validate <scenario>        check a scenario file; every problem as file:line:col path: message
  occusim schema                     print the scenario JSON Schema
  occusim schema --graphql           print the GraphQL SDL of the platform API (/api/v3/graphql)
  occusim frames <scenario> --sensor <id|name> --from <t> --to <t> --out DIR
                [--gif FILE] [--true-positions]
                                     labelled PNG heat maps of what one sensor saw, a contact
                                     sheet and an animated GIF (t: HH:MM or 30m)
  occusim check <capture.occap>      protocol conformance of a capture (violations: exit 1)
  occusim check --listen --scenario <file> [--mqtt-port N] [--duration D]
                                     embedded broker + live conformance of a device under test
  occusim replay <capture.occap> [--speed max|F] [--broker URL] [--scenario <file>]
                                     re-publish a capture's hive messages
  occusim serve --scenario <file> [--db FILE] [--port N] [--mqtt-port N] [--audience A]
                                     the platform alone: broker, cloud ingest and HTTP API
  occusim serve --scenario <file> --feed [--speed F] [run options]
                                     the same, fed live by the scenario at F× real time
                                     (default 1); keeps serving after it ends, until Ctrl-C
  occusim deadletters --db <store.sqlite>
                                     list the cloud store's dead letters (reason, topic, message)
  occusim receive [--port N] [--secret whsec_…] [--out FILE] [--fail-rate P] [--latency MS]
                                     a webhook endpoint: verifies signatures, dedupes by id,
                                     counts per type, appends new bodies to an NDJSON file
  occusim webhooks replay --db FILE (--dead | --from T --to T) [--subscription ID]
                                     put webhook dead letters (or a time range) back in the outbox
  occusim webhooks deadletters --db FILE
                                     list the webhook dead letters of a store
  occusim --help | --version

run options:
  --seed N              override the scenario's seed
  --speed max|F         max (default): virtual time, deterministic; F: F× real time
  --duration D          override the duration (90s, 30m, 2h, 1h30m, 1d)
  --start T             override the start: site-local 2026-11-23T08:00, with Z or an
                        offset, or 'now' (a live feed whose data carries today's times)
  --fidelity F          model (statistical sensors) or frame (thermal frames + edge detection)
  --workers N           worker threads for frame fidelity (0: main thread; results identical)
  --report FILE         write the JSON report { scenario, seed, result, perf, db }
  --store sqlite:FILE   the cloud store (default: a new temp file; --db FILE is an alias);
                        a store that holds a run is refused unless --resume or --fresh
  --keep                keep the temporary store (deleted at exit without --store/--keep)
  --resume              continue the run held by --db (same scenario and seed)
  --platform-thread M   auto (default: its own thread from 1,000 sensors), on or off:
                        where the platform (broker, ingest, store, API) runs; same results
  --fresh               delete what --db holds and start over
  --mqtt-port N         port of the embedded MQTT broker (default: a free port)
  --broker URL          use an external MQTT broker (mqtt://host:port) instead
  --record FILE         write every MQTT message to a capture (.occap; embedded broker only)
  --quiet               no progress bar, no summary
  --serve               serve the platform from the run's start and after its end: API
                        (--port, default 8080, 0: free port) and MQTT (--mqtt-port), until
                        Ctrl-C (which also ends a running simulation early)
  --audience A          API identifier accepted in client logins (default https://api.occusim.local)
  --webhook-allow CIDRS webhook destinations allowed although loopback or private, comma-separated
                        (e.g. 127.0.0.1/8 for a local occusim receive); docs/webhooks.md
  --truth FILE          write the ground truth: per-minute true counts per space and every
                        door crossing, NDJSON (docs/report.md)
  --html FILE           write a self-contained HTML report with plots (docs/report.md)
  --no-graphiql         with --serve (and serve): no GraphQL IDE page at /api/graphiql

Exit codes: 0 ok, 1 the run found a failure condition (data lost), 2 usage or input error.
`;

const OPTIONS = {
  seed: { type: 'string' },
  speed: { type: 'string' },
  duration: { type: 'string' },
  start: { type: 'string' },
  fidelity: { type: 'string' },
  workers: { type: 'string' },
  report: { type: 'string' },
  db: { type: 'string' },
  store: { type: 'string' },
  keep: { type: 'boolean' },
  resume: { type: 'boolean' },
  'platform-thread': { type: 'string' },
  fresh: { type: 'boolean' },
  'mqtt-port': { type: 'string' },
  broker: { type: 'string' },
  record: { type: 'string' },
  listen: { type: 'boolean' },
  scenario: { type: 'string' },
  serve: { type: 'boolean' },
  feed: { type: 'boolean' },
  audience: { type: 'string' },
  port: { type: 'string' },
  quiet: { type: 'boolean' },
  sensor: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  graphql: { type: 'boolean' },
  secret: { type: 'string' },
  'fail-rate': { type: 'string' },
  'webhook-allow': { type: 'string' },
  dead: { type: 'boolean' },
  subscription: { type: 'string' },
  latency: { type: 'string' },
  // issue 17 (pictures): run report files, animated frames, the GraphQL IDE switch
  truth: { type: 'string' },
  html: { type: 'string' },
  gif: { type: 'string' },
  'true-positions': { type: 'boolean' },
  'no-graphiql': { type: 'boolean' },
} as const;

export async function main(argv: readonly string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    io.stderr.write(`occusim: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const flags = parsed.values as Flags;
  const [command, ...rest] = parsed.positionals;
  if (flags.version) {
    io.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (flags.help || command === undefined || command === 'help') {
    io.stdout.write(HELP);
    return command === undefined && !flags.help ? 2 : 0;
  }
  try {
    return await dispatch(command, rest, flags, io);
  } catch (err) {
    if (isAppError(err)) {
      io.stderr.write(`occusim: ${err.message}\n`);
      return err.code === 'USAGE' || err.code === 'SCENARIO_INVALID' || err.code === 'NOT_IMPLEMENTED' || err.code === 'SCENARIO_NOT_FOUND' || err.code === 'CAPTURE_INVALID' ? 2 : 1;
    }
    io.stderr.write(`occusim: internal error: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

async function dispatch(command: string, args: string[], flags: Flags, io: Io): Promise<number> {
  const needFile = (): string => {
    const [file, extra] = args;
    if (file === undefined || extra !== undefined) throw new AppError(ErrorCodes.USAGE, `occusim ${command} takes exactly one scenario file`);
    return file;
  };
  switch (command) {
    case 'run':
      return runCommand(needFile(), flags, io);
    case 'validate':
      return validateCommand(needFile(), io);
    case 'schema':
      return flags.graphql === true ? graphqlSchemaCommand(io) : schemaCommand(io);
    case 'frames':
      return framesCommand(needFile(), flags, io);
    case 'check':
      return checkCommand(args, flags, io);
    case 'replay':
      return replayCommand(args, flags, io);
    case 'deadletters':
      return deadlettersCommand(args, flags, io);
    case 'webhooks':
      return webhooksCommand(args, flags, io);
    case 'receive':
      return receiveCommand(args, flags, io);
    case 'serve':
      if (args.length > 0) throw new AppError(ErrorCodes.USAGE, 'occusim serve takes no positional argument (use --scenario <file>)');
      return flags.feed === true ? feedCommand(flags, io) : serveCommand(flags, io);
    default:
      throw new AppError(ErrorCodes.USAGE, `unknown command ${JSON.stringify(command)} (try occusim --help)`);
  }
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
