import { systemClock } from '../core/clock.js';
import { connectAsync, type MqttClient } from 'mqtt';
import { readCapture } from '../capture/format.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { parseHiveTopic } from '../core/topics.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { Flags, Io } from './commands.js';

/**
 * `occusim replay <capture> [--speed N] [--broker url] [--scenario file]`: re-publishes the
 * hive messages of a capture (uplinks and heartbeats, QoS 1, in order; acks are the cloud's
 * and are skipped), one MQTT client per hive logged in as its serial. `--scenario` supplies
 * the seeded hive passwords (needed by the embedded broker, not by an anonymous one).
 * `--speed max` (default) publishes as fast as the broker acknowledges; N replays at N×
 * the captured pace.
 */
export async function replayCommand(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  const [file, extra] = args;
  if (file === undefined || extra !== undefined)
    throw new AppError(ErrorCodes.USAGE, 'occusim replay takes exactly one capture file');
  const speed = speedOf(flags.speed);
  const url = typeof flags.broker === 'string' ? flags.broker : 'mqtt://127.0.0.1:1883';
  const { header, messages } = readCapture(file);
  const passwords = passwordsOf(flags);
  const clients = new Map<string, MqttClient>();
  const started = systemClock.now();
  let published = 0;
  let skipped = 0;
  try {
    for (const h of header.hives)
      clients.set(
        h.serial,
        await connectHive(url, h.serial, passwords.get(h.serial), typeof flags.scenario === 'string'),
      );
    const firstT = messages[0]?.t ?? 0;
    for (const m of messages) {
      const parsed = parseHiveTopic(m.topic);
      const client = parsed ? clients.get(parsed.serial) : undefined;
      if (!parsed || parsed.kind === 'ack' || !client) {
        skipped++;
        continue;
      }
      if (speed !== 'max') await sleep(started + (m.t - firstT) / speed - systemClock.now());
      await client.publishAsync(m.topic, Buffer.from(m.payload), { qos: 1 });
      published++;
    }
  } finally {
    for (const c of clients.values()) await c.endAsync();
  }
  io.stdout.write(
    `replayed ${published} message(s) of ${file} to ${url} in ${((systemClock.now() - started) / 1000).toFixed(1)} s (${skipped} acks/other skipped)\n`,
  );
  return 0;
}

function speedOf(flag: Flags[string]): 'max' | number {
  if (flag === undefined || flag === 'max') return 'max';
  const f = Number(flag);
  if (typeof flag !== 'string' || !(f > 0) || !Number.isFinite(f))
    throw new AppError(ErrorCodes.USAGE, `--speed must be 'max' or a positive number, got ${JSON.stringify(flag)}`);
  return f;
}

function passwordsOf(flags: Flags): Map<string, string> {
  if (typeof flags.scenario !== 'string') return new Map();
  const loaded = loadScenarioFile(flags.scenario);
  if (!loaded.ok)
    throw new AppError(ErrorCodes.SCENARIO_INVALID, `invalid scenario ${flags.scenario} (run occusim validate)`);
  return new Map(loaded.model.hives.map((h) => [h.serial, h.password]));
}

async function connectHive(
  url: string,
  serial: string,
  password: string | undefined,
  withScenario: boolean,
): Promise<MqttClient> {
  try {
    return await connectAsync(
      url,
      {
        clientId: `hive-${serial}`,
        username: serial,
        ...(password === undefined ? {} : { password }),
        clean: true,
        reconnectPeriod: 0,
        connectTimeout: 5000,
      },
      false,
    );
  } catch (err) {
    const message = (err as Error).message;
    // An occusim broker (serve, check --listen, run --serve) logs hives in with the scenario's passwords.
    if (/bad user ?name or password|not authori[sz]ed/i.test(message)) {
      const hint = withScenario
        ? `the broker refused hive ${serial}'s password from --scenario: is it serving the same scenario and seed?`
        : `the broker refused hive ${serial} without a password: pass --scenario <file> (the scenario it serves) so each hive logs in with its password`;
      throw new AppError(ErrorCodes.USAGE, `replay: ${hint} (${url}: ${message})`, { cause: err });
    }
    throw new AppError(ErrorCodes.BROKER_FAILED, `replay: hive ${serial} cannot connect to ${url}: ${message}`, {
      cause: err,
    });
  }
}

function sleep(ms: number): Promise<void> {
  return ms > 1 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
