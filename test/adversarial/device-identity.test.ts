import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteApiState } from '../../src/store/sqlite-api-state.js';
import { VirtualClock } from '../../src/core/clock.js';
import { ackTopic, uplinkTopic } from '../../src/core/topics.js';
import { startPlatform, type Platform } from '../../src/platform/platform.js';
import { decodeAck, encodeUplink } from '../../src/proto/codec.js';
import type { HiveModel, ScenarioModel, SensorModel } from '../../src/scenario/model.js';
import { presenceAt } from '../cloud/fixture.js';
import { twoTenantsModel } from './served.js';

/**
 * The cross-tenant hijack of device identities (issue 33, item 1), end to end over MQTT and
 * HTTP: organisation B registers organisation A's hive serial and sensor MAC (through GraphQL,
 * and through an overlay stored before identities were unique), and A's real uplinks must
 * still be stored as A's occupancy, never credited to B, never dead-lettered. A hive of B
 * must not be able to disconnect A's hive by taking its client id.
 */
const AUDIENCE = 'https://api.occusim.local';

interface Org {
  token: string;
  floor: string;
  hive: HiveModel;
  sensor: SensorModel;
}

function orgOf(model: ScenarioModel, index: number): Omit<Org, 'token'> {
  const org = model.organisations![index]!;
  const floors = new Set(model.floors.filter((f) => org.siteIds.includes(f.siteId)).map((f) => f.id));
  const floor = model.floors.find((f) => floors.has(f.id))!.id;
  const hive = model.hives.find((h) => h.floorId === floor)!;
  const sensor = model.sensors.find((s) => s.hiveId === hive.id && s.mode === 'presence' && s.roomId !== null)!;
  return { floor, hive, sensor };
}

async function login(apiUrl: string, model: ScenarioModel, index: number): Promise<string> {
  const org = model.organisations![index]!;
  const client = model.clients.find((c) => org.clientIds.includes(c.clientId))!;
  const res = await fetch(`${apiUrl}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.secret,
      audience: AUDIENCE,
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

interface GqlAnswer {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

async function graphql(
  apiUrl: string,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GqlAnswer> {
  const res = await fetch(`${apiUrl}/api/v3/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as GqlAnswer;
}

const CREATE_HIVE = `mutation($input: [CreateHiveInput!]!) { createHives(input: $input) { id serial_number } }`;
const CREATE_SENSOR = `mutation($input: [CreateSensorInput!]!) { createSensors(input: $input) { sensor_id mac_address } }`;

async function hiveConnection(url: string, hive: HiveModel, clientId = `hive-${hive.serial}`): Promise<MqttClient> {
  const client = await connectAsync(url, {
    clientId,
    username: hive.serial,
    password: hive.password,
    clean: true,
    reconnectPeriod: 0,
  });
  await client.subscribeAsync(ackTopic(hive.serial), { qos: 1 });
  return client;
}

/** Publishes one batch with one presence packet of the sensor (a person at its centre) and waits for its ack. */
async function publishPresence(
  client: MqttClient,
  hive: HiveModel,
  sensor: SensorModel,
  seq: number,
  sensedAtMs: number,
): Promise<void> {
  const acked = new Promise<void>((resolve) => {
    const on = (_t: string, payload: Buffer): void => {
      if (decodeAck(payload).ackedSeq >= seq) {
        client.off('message', on);
        resolve();
      }
    };
    client.on('message', on);
  });
  const packets = [presenceAt(sensor, sensedAtMs, [sensor.center])];
  await client.publishAsync(
    uplinkTopic(hive.serial),
    Buffer.from(encodeUplink({ hiveSerial: hive.serial, seq, sentAtMs: sensedAtMs + 500, packets })),
    { qos: 1 },
  );
  await acked;
}

describe('device identities belong to one organisation', () => {
  const model = twoTenantsModel();
  const a = orgOf(model, 0);
  const b = orgOf(model, 1);
  let dir: string;
  let clock: VirtualClock;
  let platform: Platform;
  let tokenA: string;
  let tokenB: string;
  let restarts = 0;

  const start = async (): Promise<void> => {
    platform = await startPlatform(
      platformConfig({
        organisations: organisationsFromScenario(model),
        tickMs: model.tickMs,
        store: { kind: 'sqlite', path: join(dir, 'store.sqlite') },
        api: { port: 0, audience: AUDIENCE },
        storePolicy: restarts++ === 0 ? 'new' : 'resume',
      }),
      { clock },
    );
    tokenA = await login(platform.apiUrl!, model, 0);
    tokenB = await login(platform.apiUrl!, model, 1);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'occusim-identity-'));
    clock = new VirtualClock(model.startMs);
    await start();
  }, 120_000);

  afterAll(async () => {
    await platform?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses another organisation's hive serial with the answer its own duplicate gets", async () => {
    const cloned = await graphql(platform.apiUrl!, tokenB, CREATE_HIVE, {
      input: [{ floor_id: b.floor, name: 'clone', serial_number: a.hive.serial }],
    });
    const own = await graphql(platform.apiUrl!, tokenB, CREATE_HIVE, {
      input: [{ floor_id: b.floor, name: 'again', serial_number: b.hive.serial }],
    });
    const twice = await graphql(platform.apiUrl!, tokenB, CREATE_HIVE, {
      input: [
        { floor_id: b.floor, name: 'x', serial_number: 'HVFRESH00001' },
        { floor_id: b.floor, name: 'y', serial_number: 'HVFRESH00001' },
      ],
    });
    expect(cloned.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    // No oracle: a serial held elsewhere reads exactly like one the caller holds itself.
    expect(cloned.errors?.[0]?.message).toBe(own.errors?.[0]?.message);
    expect(JSON.stringify(cloned.errors)).not.toContain(model.organisations![0]!.id);
    const reverse = await graphql(platform.apiUrl!, tokenA, CREATE_HIVE, {
      input: [{ floor_id: a.floor, name: 'clone', serial_number: b.hive.serial }],
    });
    expect(reverse.errors?.[0]?.message).toBe(own.errors?.[0]?.message);
    expect(twice.errors?.[0]?.message).toBe('input[1].serial_number: this serial number is already registered');
    // The refused batch created nothing; a free serial is accepted.
    const fresh = await graphql(platform.apiUrl!, tokenB, CREATE_HIVE, {
      input: [{ floor_id: b.floor, name: 'fresh', serial_number: 'HVFRESH00001' }],
    });
    expect(fresh.errors).toBeUndefined();
  });

  it("refuses another organisation's sensor MAC, in any letter case, with the answer its own duplicate gets", async () => {
    const input = (mac: string) => ({
      input: [
        {
          floor_id: b.floor,
          hive_id: b.hive.id,
          name: 'clone',
          mode: 'presence',
          room_id: b.sensor.roomId,
          center: [6, 4],
          mac_address: mac,
        },
      ],
    });
    const cloned = await graphql(platform.apiUrl!, tokenB, CREATE_SENSOR, input(a.sensor.mac));
    const upper = await graphql(platform.apiUrl!, tokenB, CREATE_SENSOR, input(a.sensor.mac.toUpperCase()));
    const own = await graphql(platform.apiUrl!, tokenB, CREATE_SENSOR, input(b.sensor.mac));
    for (const answer of [cloned, upper, own]) expect(answer.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(cloned.errors?.[0]?.message).toBe(own.errors?.[0]?.message);
    const malformed = await graphql(platform.apiUrl!, tokenB, CREATE_SENSOR, input('00:17:0d:00:00:00:00:01'));
    expect(malformed.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it("keeps crediting A's uplinks to A's room after B's attempts, with nothing dead-lettered", async () => {
    const hive = await hiveConnection(platform.brokerUrl, a.hive);
    await publishPresence(hive, a.hive, a.sensor, 1, model.startMs + 1_000);
    await hive.endAsync();
    clock.advanceTo(model.startMs + 61_000);
    await platform.advanceTo(model.startMs + 61_000);
    expect(await platform.reads.presenceMinutes(a.sensor.roomId!)).toEqual([
      { minuteMs: model.startMs, value: 1, samples: 1 },
    ]);
    expect(await platform.reads.deadLetters()).toEqual([]);
  });

  it("refuses a hive login that takes another hive's client id, and the other hive stays connected", async () => {
    const victim = await hiveConnection(platform.brokerUrl, a.hive);
    let closed = false;
    victim.on('close', () => (closed = true));
    await expect(hiveConnection(platform.brokerUrl, b.hive, `hive-${a.hive.serial}`)).rejects.toThrow(
      /identifier rejected/i,
    );
    // Its own id is fine, and so is one the broker assigns (an empty id with a clean session).
    await (await hiveConnection(platform.brokerUrl, b.hive)).endAsync();
    await (await hiveConnection(platform.brokerUrl, b.hive, '')).endAsync();
    await publishPresence(victim, a.hive, a.sensor, 2, model.startMs + 62_000);
    expect(closed).toBe(false);
    await victim.endAsync();
  });

  it('does not restore a clone stored before identities were unique, and A keeps its uplinks after the restart', async () => {
    await platform.close();
    // What a pre-fix platform stored for B: A's serial and MAC on B's floor.
    const state = new SqliteApiState(join(dir, 'store.sqlite'));
    const overlay = (await state.overlay(model.organisations![1]!.id)) ?? { changed: [], deleted: [], tags: [] };
    const cloneHive = { ...b.hive, id: 'hive_clone', name: 'clone', serial: a.hive.serial };
    const cloneSensor = { ...b.sensor, id: 'sensor_clone', name: 'clone', mac: a.sensor.mac, hiveId: 'hive_clone' };
    const floorB = catalogueFromScenario(model).find('floor', b.floor)!.item;
    overlay.changed.push(
      { kind: 'hive', item: cloneHive as never },
      { kind: 'sensor', item: cloneSensor as never },
      {
        kind: 'floor',
        item: {
          ...floorB,
          hiveIds: [...floorB.hiveIds, 'hive_clone'],
          sensorIds: [...floorB.sensorIds, 'sensor_clone'],
        } as never,
      },
    );
    await state.putOverlay(model.organisations![1]!.id, overlay);
    await state.close();

    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      await start();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.some((w) => w.includes('hive hive_clone not restored'))).toBe(true);
    const listed = await graphql(
      platform.apiUrl!,
      tokenB,
      `
        {
          hives {
            data {
              id
              serial_number
            }
          }
        }
      `,
    );
    expect(JSON.stringify(listed.data)).not.toContain(a.hive.serial);

    const hive = await hiveConnection(platform.brokerUrl, a.hive);
    await publishPresence(hive, a.hive, a.sensor, 3, model.startMs + 121_000);
    await hive.endAsync();
    clock.advanceTo(model.startMs + 181_000);
    await platform.advanceTo(model.startMs + 181_000);
    const minutes = await platform.reads.presenceMinutes(a.sensor.roomId!);
    expect(minutes.find((m) => m.minuteMs === model.startMs + 120_000)).toEqual({
      minuteMs: model.startMs + 120_000,
      value: 1,
      samples: 1,
    });
    expect(await platform.reads.presenceMinutes(b.sensor.roomId!)).not.toContainEqual(
      expect.objectContaining({ minuteMs: model.startMs + 120_000, value: 1 }),
    );
    expect(await platform.reads.deadLetters()).toEqual([]);
  }, 120_000);
});
