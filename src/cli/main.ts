import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { graphqlSchemaCommand } from '../api/graphql/sdl.js';
import { checkCommand } from './check.js';
import { exploreCommand } from './explore.js';
import { feedCommand, runCommand, schemaCommand, validateCommand } from './commands.js';
import { credentialsCommand } from './credentials.js';
import { deadlettersCommand } from './deadletters.js';
import { statusCommand } from './status.js';
import { exitCodeOfError } from './errors.js';
import { framesCommand } from './frames.js';
import type { Flags, Io } from './io.js';
import { OPTIONS, RUN_OPTIONS, type OptionName } from './options.js';
import { receiveCommand } from './receive.js';
import { consumerVerifyCommand } from './consumer-verify.js';
import { replayCommand } from './replay.js';
import { reportMergeCommand } from './report.js';
import { serveCommand } from './serve.js';
import { webhooksCommand } from './webhooks.js';

/**
 * `occusim` command line: a thin shell over the library API, on commander. Each command lists
 * the options it takes (one definition each, options.ts), so its help is generated and an
 * option of another command is refused with a "did you mean". Exit codes (DESIGN §3.1):
 * 0 ok, 1 a run or check found a failure condition, 2 usage, input or environment error,
 * 130 interrupted (Ctrl-C) before the end.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const debug = argv.includes('--debug');
  let code = 0;
  const program = buildProgram(io, (c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return commanderExit(err, argv, io);
    return exitCodeOfError(err, io, debug);
  }
}

type Action = (args: string[], flags: Flags) => Promise<number> | number;

function buildProgram(io: Io, setCode: (code: number) => void): Command {
  const program = new Command('occusim')
    .description('deterministic simulator of a thermal people-sensing platform')
    .version(packageVersion(), '--version', 'print the version')
    .option('--debug', 'print stack traces of internal errors')
    .showSuggestionAfterError(true)
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      // Errors are printed once, as one line, by commanderExit.
      outputError: () => undefined,
    })
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 a run or check found a failure (a threshold, lost data, a violation), 2 usage or input error, 130 interrupted.\nRun occusim <command> --help for the options of a command.',
    );

  const command = (
    name: string,
    description: string,
    options: readonly OptionName[],
    action: Action,
    parent: Command = program,
  ): Command => {
    const cmd = parent.command(name).description(description);
    for (const o of options) cmd.addOption(OPTIONS[o]());
    cmd.exitOverride().configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: () => undefined,
    });
    cmd.action(async (...received: unknown[]) => {
      const self = received[received.length - 1] as Command;
      setCode(await action(self.args, flagsOf(self)));
    });
    return cmd;
  };

  command(
    'run',
    'simulate a scenario end to end and compare with ground truth',
    [...RUN_OPTIONS, 'shard', 'externalIngest', 'serve', 'port', 'audience', 'graphiql', 'metricsToken', 'allowedHost'],
    ([file], f) => runCommand(file as string, f, io),
  ).argument('<scenario>', 'scenario file, or a shipped scenario by name (quickstart)');
  command(
    'explore',
    "run the scenario under seeded fault schedules, check invariants, shrink and print each failure's replay command (docs/explore.md)",
    ['seed', 'duration', 'report', 'junit', 'expect'],
    ([file], f) => exploreCommand(file as string, f, io),
  )
    .argument('<scenario>')
    .addOption(new Option('--runs <n>', 'schedules to try (default 20)'))
    .addOption(new Option('--time-budget <d>', 'stop drawing new runs after this wall time (e.g. 10m)'))
    .addOption(new Option('--kinds <list>', 'fault kinds to draw, comma-separated (default all)'))
    .addOption(new Option('--max-faults <n>', 'faults per schedule at most (default 3)'))
    .addOption(
      new Option(
        '--jobs <n>',
        'worker threads running schedules: auto (one per core, default) or a number (1: in this thread)',
      ),
    )
    .addOption(
      new Option(
        '--invariant-cmd <cmd>',
        'a shell command judging each run (OCCUSIM_REPORT, OCCUSIM_STORE, OCCUSIM_FAULTS set); non-zero exit = violated',
      ),
    );
  command('validate', 'check a scenario file: every problem as file:line:col path: message', ['json'], ([file], f) =>
    validateCommand(file as string, f, io),
  ).argument('<scenario>');
  command('schema', 'print the scenario JSON Schema (or, with --graphql, the GraphQL SDL of the API)', [], (_, f) =>
    f.graphql === true ? graphqlSchemaCommand(io) : schemaCommand(io),
  ).addOption(new Option('--graphql', 'print the GraphQL SDL of /api/v3/graphql instead'));
  command(
    'frames',
    'labelled PNG heat maps of what one sensor saw, a contact sheet and an animated GIF (t: HH:MM or 30m)',
    [],
    ([file], f) => framesCommand(file as string, f, io),
  )
    .argument('<scenario>')
    .addOption(new Option('--sensor <id|name>', 'the sensor').makeOptionMandatory())
    .addOption(new Option('--from <t>', 'first frame: local HH:MM or an offset such as 30m').makeOptionMandatory())
    .addOption(new Option('--to <t>', 'last frame').makeOptionMandatory())
    .addOption(new Option('--out <dir>', 'directory of the PNG files').makeOptionMandatory())
    .addOption(new Option('--gif <file>', 'also an animated GIF of the period'))
    .addOption(new Option('--true-positions', 'mark the true positions of people in each frame'));
  command(
    'check',
    'protocol conformance of a capture, or (--listen) of a live device',
    ['scenario', 'mqttPort', 'host', 'duration', 'json', 'junit'],
    (args, f) => checkCommand(args, f, io),
  )
    .argument('[capture]', 'a capture file (.occap)')
    .addOption(new Option('--listen', 'embedded broker + live conformance of a device under test (needs --scenario)'));
  command('replay', "re-publish a capture's hive messages", ['speed', 'broker', 'scenario'], (args, f) =>
    replayCommand(args, f, io),
  ).argument('<capture>');
  command(
    'serve',
    'the platform alone: broker, cloud ingest and HTTP API (with --feed: fed live by the scenario)',
    [
      'scenario',
      'port',
      'audience',
      'graphiql',
      'metricsToken',
      'allowedHost',
      'shareGroup',
      'partition',
      'leaseMs',
      'shards',
      ...RUN_OPTIONS,
    ],
    (_, f) => (f.feed === true ? feedCommand(f, io) : serveCommand(f, io)),
  ).addOption(
    new Option(
      '--feed',
      'feed the platform live with the scenario at --speed F× real time (default 1); serves on after it ends, until Ctrl-C',
    ),
  );
  command(
    'credentials',
    "a scenario's seeded credentials as JSON: hives (serial, MQTT username, password, topics), users, clients",
    ['scenario'],
    (_, f) => credentialsCommand(f, io),
  );
  command(
    'status',
    'which ingest process holds which floor partition of a PostgreSQL store, and how far behind each is (docs/scale-out.md)',
    ['store', 'json'],
    (args, f) => statusCommand(args, f, io),
  );
  command(
    'deadletters',
    "list the cloud store's dead letters (received, reason, topic, message)",
    ['store', 'db', 'json'],
    (args, f) => deadlettersCommand(args, f, io),
  );
  command(
    'receive',
    'a webhook endpoint: verifies signatures, dedupes by id, counts per type, appends new bodies to an NDJSON file',
    ['host'],
    (args, f) => receiveCommand(args, f, io),
  )
    .addOption(new Option('--port <n>', 'port to listen on (default 8787)'))
    .addOption(new Option('--secret <whsec_…>', 'signing secret(s), comma-separated'))
    .addOption(new Option('--out <file>', 'append each new body to this NDJSON file'))
    .addOption(new Option('--fail-rate <p>', 'answer this share of deliveries with 500'))
    .addOption(new Option('--latency <ms>', 'answer after this many ms'))
    .addOption(new Option('--seed <s>', 'seed of the failure draws'))
    .addOption(
      new Option('--dedupe-ids <n>', 'ids remembered for the dedupe, oldest forgotten first (default 1,000,000)'),
    )
    .addOption(
      new Option(
        '--no-timestamp-check',
        'accept any webhook-timestamp (deliveries of a run with --webhook-timestamps simulated); default: within 5 minutes of this clock',
      ),
    )
    .addOption(
      new Option(
        '--apply <mode>',
        'hold the state a consumer of this kind would: idempotent, naive or first-wins (served at GET /state; docs/load-testing.md)',
      ),
    )
    .addOption(new Option('--state <file>', 'with --apply: write the state as NDJSON when stopped'));
  command(
    'consumer-verify',
    "compare a consumer's state with the state a correct consumer must reach (run --consumer-expect): missing, extra and wrong rows; exit 1 on any",
    ['json', 'junit'],
    (args, f) => consumerVerifyCommand(args, f, io),
  )
    .addOption(new Option('--expected <file>', 'the expected state (occusim run --consumer-expect FILE)'))
    .addOption(new Option('--actual <file>', "the consumer's state, NDJSON (docs/load-testing.md)"))
    .addOption(new Option('--actual-url <url>', "a URL answering the consumer's state as NDJSON"))
    .addOption(
      new Option(
        '--subscription <name>',
        'the subscription whose rows are compared (needed when the expected file holds several)',
      ),
    );
  const webhooks = program
    .command('webhooks')
    .description('webhook dead letters and replays of a store')
    .exitOverride();
  webhooks.configureOutput({
    writeOut: (s) => void io.stdout.write(s),
    writeErr: (s) => void io.stderr.write(s),
    outputError: () => undefined,
  });
  command(
    'replay',
    'put webhook dead letters (--dead) or a time range (--from/--to) back in the outbox',
    ['store', 'db'],
    (_, f) => webhooksCommand(['replay'], f, io),
    webhooks,
  )
    .addOption(new Option('--dead', 'every dead letter'))
    .addOption(new Option('--from <t>', 'RFC 3339 instant'))
    .addOption(new Option('--to <t>', 'RFC 3339 instant'))
    .addOption(new Option('--subscription <id>', 'only this subscription'));
  command(
    'deadletters',
    'list the webhook dead letters of a store',
    ['store', 'db'],
    (_, f) => webhooksCommand(['deadletters'], f, io),
    webhooks,
  ).addOption(new Option('--subscription <id>', 'only this subscription'));
  const report = program
    .command('report')
    .description('run reports: merge the reports of simulator shards (--shard i/n)')
    .exitOverride();
  report.configureOutput({
    writeOut: (s) => void io.stdout.write(s),
    writeErr: (s) => void io.stderr.write(s),
    outputError: () => undefined,
  });
  command(
    'merge',
    "the shards' reports as the whole run's ledger and accuracy (docs/scale-out.md)",
    ['json', 'store', 'db', 'scenario'],
    (files, f) => reportMergeCommand(files, f, io),
    report,
  )
    .argument('<reports...>', 'report files of every shard (occusim run --shard i/n --report FILE)')
    .addOption(new Option('--out <file>', 'also write the merged report as JSON to this file'));
  return program;
}

/** A command's options by long name (`mqtt-port`), as the command modules read them. */
function flagsOf(cmd: Command): Flags {
  const values = cmd.opts();
  const flags: Flags = {};
  for (const o of cmd.options) {
    const v: unknown = values[o.attributeName()];
    if (v !== undefined) flags[o.name()] = v as Flags[string];
  }
  return flags;
}

/** Commander's verdicts: help and version exit 0; every parse error is one line and exit 2. */
function commanderExit(err: CommanderError, argv: readonly string[], io: Io): number {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
  // `occusim` alone: the help was written to stderr; a usage error.
  if (err.code === 'commander.help' || err.code === 'commander.executeSubCommandAsync') return 2;
  const where = commandPath(argv);
  const message = err.message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean (.*)\?\)/, '; did you mean $1?')
    .replace(/\s*\n\s*/g, ' ');
  io.stderr.write(
    `occusim${where === '' ? '' : ` ${where}`}: ${message} (see occusim ${where === '' ? '' : `${where} `}--help)\n`,
  );
  return 2;
}

const COMMANDS = new Set([
  'run',
  'explore',
  'validate',
  'schema',
  'frames',
  'check',
  'replay',
  'serve',
  'credentials',
  'deadletters',
  'receive',
  'consumer-verify',
  'webhooks',
  'report',
]);

function commandPath(argv: readonly string[]): string {
  const first = argv.find((a) => !a.startsWith('-'));
  if (first === undefined || !COMMANDS.has(first)) return '';
  const sub = argv[argv.indexOf(first) + 1];
  if (first === 'report') return sub === 'merge' ? 'report merge' : first;
  if (first !== 'webhooks') return first;
  return sub === 'replay' || sub === 'deadletters' ? `webhooks ${sub}` : first;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
