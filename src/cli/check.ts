import { systemClock } from '../core/clock.js';
import { connectAsync, type MqttClient } from 'mqtt';
import { startBroker, type EmbeddedBroker } from '../broker/aedes-broker.js';
import { checkCapture, createChecker, formatViolation, type Checker } from '../capture/check.js';
import { readCapture } from '../capture/format.js';
import type { Violation } from '../capture/rules.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { secretFor } from '../core/ids.js';
import { parseDuration } from '../core/time.js';
import { ackTopic, allHivesFilter, parseHiveTopic } from '../core/topics.js';
import { decodeUplink, encodeAck } from '../proto/codec.js';
import type { ScenarioModel } from '../scenario/model.js';
import { RULES } from '../capture/rules.js';
import { writeFileSync } from 'node:fs';
import { formatHiveCredentials, scenarioOf } from './credentials.js';
import { junitXml, type JunitCase, type JunitSuite } from './junit.js';
import { hostOf, mqttPortOf } from './options.js';
import { checkOutputFiles } from './preflight.js';
import type { Flags, Io } from './commands.js';

/**
 * `occusim check <capture>`: protocol conformance of a recorded capture.
 * `occusim check --listen --scenario <file>`: starts the embedded broker with the scenario's
 * hive credentials, plays the cloud (acks the highest contiguous seq of every hive) and checks
 * a device under test live; violations are printed as they happen, a summary at the end
 * (SIGINT/SIGTERM, or after --duration of wall time). Exit 0 conformant, 1 violations.
 */
export async function checkCommand(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  if (flags.listen === true) {
    if (args.length > 0) throw new AppError(ErrorCodes.USAGE, 'occusim check --listen takes no capture file');
    return listen(flags, io);
  }
  const [file, extra] = args;
  if (file === undefined || extra !== undefined)
    throw new AppError(ErrorCodes.USAGE, 'occusim check takes exactly one capture file (or --listen)');
  for (const name of ['scenario', 'mqtt-port', 'host', 'duration']) {
    if (flags[name] !== undefined) throw new AppError(ErrorCodes.USAGE, `--${name} belongs to occusim check --listen`);
  }
  checkOutputFiles(flags, ['junit']);
  const { header, messages } = readCapture(file);
  const { violations, counts } = checkCapture(header, messages);
  const verdict = {
    source: file,
    scenario: header.scenario,
    seed: header.seed,
    counts,
    violations,
    empty: counts.messages === 0,
  };
  if (flags.json !== true) {
    for (const v of violations) io.stdout.write(`${file}: ${formatViolation(v)}\n`);
    io.stdout.write(
      `${file}: ${header.protocol} capture of ${header.scenario} (seed ${header.seed}): ${counts.messages} messages — ${counts.uplinks} uplinks ` +
        `(${counts.retransmissions} retransmissions), ${counts.acks} acks, ${counts.heartbeats} heartbeats: ${conclusion(verdict)}\n`,
    );
  }
  return finishCheck(verdict, flags, io);
}

interface CheckVerdict {
  source: string;
  scenario: string;
  seed: number;
  counts: ReturnType<Checker['counts']>;
  violations: readonly Violation[];
  /** Nothing arrived: no device was checked, which is no pass. */
  empty: boolean;
}

function conclusion(v: CheckVerdict): string {
  if (v.empty) return 'nothing arrived (no device was checked)';
  if (v.violations.length === 0) return 'conformant';
  const byRule = new Map<string, number>();
  for (const x of v.violations) byRule.set(x.rule, (byRule.get(x.rule) ?? 0) + 1);
  return `${v.violations.length} violation(s) (${[...byRule].map(([r, n]) => `${r} ${n}`).join(', ')})`;
}

/** `--json`, `--junit`, and the exit code: 0 conformant, 1 violations or nothing to judge. */
function finishCheck(v: CheckVerdict, flags: Flags, io: Io): number {
  const passed = !v.empty && v.violations.length === 0;
  if (flags.json === true) io.stdout.write(`${JSON.stringify({ ...v, conformant: passed }, null, 2)}\n`);
  if (typeof flags.junit === 'string') writeFileSync(flags.junit, junitXml([conformanceSuite(v)]));
  return passed ? 0 : 1;
}

/** One JUnit test case per conformance rule (docs/protocol.md §9), plus "messages arrived". */
function conformanceSuite(v: CheckVerdict): JunitSuite {
  const classname = 'occusim.check';
  const arrived: JunitCase = {
    name: 'messages arrived',
    classname,
    ...(v.empty ? { failure: { message: 'no message arrived', details: `${v.source}: 0 messages` } } : {}),
  };
  const rules = RULES.map((rule): JunitCase => {
    const mine = v.violations.filter((x) => x.rule === rule);
    if (mine.length === 0) return { name: rule, classname };
    const shown = mine.slice(0, 50).map(formatViolation);
    const more = mine.length > shown.length ? [`… and ${mine.length - shown.length} more`] : [];
    return {
      name: rule,
      classname,
      failure: { message: `${mine.length} violation(s) of ${rule}`, details: [...shown, ...more].join('\n') },
    };
  });
  return { name: `occusim check ${v.source}`, cases: [arrived, ...rules] };
}

const CHECK_USER = 'occusim-check';

async function listen(flags: Flags, io: Io): Promise<number> {
  const model = scenarioFor(flags);
  const forMs = typeof flags.duration === 'string' ? parseDuration(flags.duration) : null;
  if (typeof flags.duration === 'string' && (forMs === null || forMs <= 0))
    throw new AppError(
      ErrorCodes.USAGE,
      `--duration must be a duration like 30s or 5m, got ${JSON.stringify(flags.duration)}`,
    );
  const port = mqttPortOf(flags);
  checkOutputFiles(flags, ['junit']);
  const hives = model.hives.map((h) => ({
    serial: h.serial,
    sensors: model.sensors.filter((s) => s.hiveId === h.id).map((s) => s.mac),
  }));
  const checker = createChecker({ hives });
  const violations: Violation[] = [];
  let index = 0;
  const report = (vs: Violation[]): void => {
    if (flags.json !== true) for (const v of vs) io.stdout.write(`VIOLATION ${formatViolation(v)}\n`);
    violations.push(...vs);
  };
  const password = secretFor(model.seed, 'service', CHECK_USER);
  const broker = await startBroker({
    port,
    host: hostOf(flags),
    hives: model.hives.map((h) => ({ serial: h.serial, password: h.password })),
    services: [{ username: CHECK_USER, password, role: 'cloud' }],
    onPublish: (topic, payload) => report(checker.check({ i: index++, t: systemClock.now(), topic, payload })),
  });
  let cloud: MqttClient | null = null;
  try {
    cloud = await ackingCloud(broker, password);
    // On stderr under --json, so stdout stays one JSON document.
    const say = flags.json === true ? io.stderr : io.stdout;
    say.write(
      `check: listening on ${broker.url} for ${model.hives.length} hive(s) of ${model.name} (username = hive serial; docs/firmware.md)\n`,
    );
    say.write(formatHiveCredentials(model));
    await untilStopped(forMs);
  } finally {
    await cloud?.endAsync();
    await broker.close();
  }
  report(checker.finish());
  const c = checker.counts();
  // The cloud's own acks do not count as a device having sent anything.
  const verdict: CheckVerdict = {
    source: broker.url,
    scenario: model.name,
    seed: model.seed,
    counts: c,
    violations,
    empty: c.uplinks + c.heartbeats === 0,
  };
  if (flags.json !== true) {
    io.stdout.write(
      `check summary: ${c.messages} messages — ${c.uplinks} uplinks (${c.retransmissions} retransmissions), ${c.acks} acks, ${c.heartbeats} heartbeats: ${conclusion(verdict)}\n`,
    );
  }
  return finishCheck(verdict, flags, io);
}

function scenarioFor(flags: Flags): ScenarioModel {
  if (typeof flags.scenario !== 'string')
    throw new AppError(
      ErrorCodes.USAGE,
      'check --listen needs --scenario <file>: its hives, their credentials and sensors',
    );
  return scenarioOf(flags, 'check --listen');
}

/** The checker's cloud: acks every uplink with the hive's highest contiguous seq (docs/protocol.md §Acks). */
async function ackingCloud(broker: EmbeddedBroker, password: string): Promise<MqttClient> {
  const client = await connectAsync(broker.url, {
    username: CHECK_USER,
    password,
    clientId: CHECK_USER,
    clean: true,
    reconnectPeriod: 0,
  });
  const seen = new Map<string, { seqs: Set<number>; contiguous: number }>();
  client.on('message', (topic, payload) => {
    const parsed = parseHiveTopic(topic);
    if (parsed?.kind !== 'uplink') return;
    let seq: number;
    try {
      seq = decodeUplink(payload).seq;
    } catch {
      return; // reported by the checker; an undecodable batch is never acked
    }
    const s = seen.get(parsed.serial) ?? { seqs: new Set<number>(), contiguous: 0 };
    seen.set(parsed.serial, s);
    s.seqs.add(seq);
    while (s.seqs.has(s.contiguous + 1)) s.contiguous++;
    const ack = encodeAck({ hiveSerial: parsed.serial, ackedSeq: s.contiguous, ackedAtMs: systemClock.now() });
    client.publishAsync(ackTopic(parsed.serial), Buffer.from(ack), { qos: 1 }).catch(() => undefined);
  });
  await client.subscribeAsync([allHivesFilter('uplink')], { qos: 1 });
  return client;
}

function untilStopped(ms: number | null): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      clearTimeout(timer);
      resolve();
    };
    const timer = ms === null ? undefined : setTimeout(stop, ms);
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
