import { AppError, ErrorCodes } from '../core/errors.js';
import { ackTopic, heartbeatTopic, uplinkTopic } from '../core/topics.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { Flags, Io } from './io.js';

/**
 * What a real hive needs to log in to occusim's broker (docs/firmware.md): its serial (the
 * MQTT username and a topic level), its password (the scenario's, or derived from the seed
 * and the serial), the topics it publishes and the one it subscribes to, and its sensors.
 * The same for the same scenario and seed, whenever and however it is served.
 */
export interface HiveCredentials {
  name: string;
  serial: string;
  username: string;
  password: string;
  publish: { uplink: string; heartbeat: string };
  subscribe: { ack: string };
  sensors: Array<{ mac: string; name: string; mode: string }>;
}

export function hiveCredentials(model: ScenarioModel): HiveCredentials[] {
  return model.hives.map((h) => ({
    name: h.name,
    serial: h.serial,
    username: h.serial,
    password: h.password,
    publish: { uplink: uplinkTopic(h.serial), heartbeat: heartbeatTopic(h.serial) },
    subscribe: { ack: ackTopic(h.serial) },
    sensors: model.sensors.filter((s) => s.hiveId === h.id).map((s) => ({ mac: s.mac, name: s.name, mode: s.mode })),
  }));
}

/** One line per hive, as `serve` and `check --listen` print them. */
export function formatHiveCredentials(model: ScenarioModel): string {
  return hiveCredentials(model)
    .map(
      (h) =>
        `hive ${h.name}: serial ${h.serial} username ${h.username} password ${h.password} publish ${h.publish.uplink} ${h.publish.heartbeat} subscribe ${h.subscribe.ack}\n`,
    )
    .join('');
}

/** `occusim credentials --scenario F`: every seeded credential of the scenario as JSON. */
export function credentialsCommand(flags: Flags, io: Io): number {
  const model = scenarioOf(flags, 'occusim credentials');
  const doc = {
    scenario: model.name,
    seed: model.seed,
    hives: hiveCredentials(model),
    users: model.users.map((u) => ({ username: u.username, password: u.password })),
    clients: model.clients.map((c) => ({ name: c.name, clientId: c.clientId, clientSecret: c.secret })),
  };
  io.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  return 0;
}

/** The model of `--scenario`, or a usage error naming the command. */
export function scenarioOf(flags: Flags, command: string): ScenarioModel {
  if (typeof flags.scenario !== 'string') throw new AppError(ErrorCodes.USAGE, `${command} needs --scenario <file>`);
  const loaded = loadScenarioFile(flags.scenario);
  if (!loaded.ok)
    throw new AppError(
      ErrorCodes.SCENARIO_INVALID,
      `invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`,
    );
  return loaded.model;
}
