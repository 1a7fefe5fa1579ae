import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledWallClock, VirtualClock } from '../../src/core/clock.js';
import { secretFor } from '../../src/core/ids.js';
import { ackTopic, uplinkTopic } from '../../src/core/topics.js';
import { startPlatform, type Platform } from '../../src/platform/platform.js';
import { decodeAck, encodeUplink } from '../../src/proto/codec.js';
import type { UplinkAck, WirePacket } from '../../src/proto/messages.js';
import type { ScenarioModel, SensorModel } from '../../src/scenario/model.js';
import { HIVE, HIVE_SERIAL, presenceAt, ROOM_A, ROOM_B, SENSOR_PA, T0, tinyModel } from '../cloud/fixture.js';

const CLIENT = {
  clientId: 'client_platformtest',
  name: 'tests',
  description: '',
  secret: 'platform-test-secret',
  src: '/clients/0',
};
const AUDIENCE = 'https://api.occusim.local';

function modelWithClient(): ScenarioModel {
  return { ...tinyModel(), clients: [CLIENT] };
}

/** A hive on the platform's broker, as a device would connect: its serial, its password, its ack topic. */
async function connectTestHive(url: string, clientId = `hive-${HIVE_SERIAL}`): Promise<MqttClient> {
  const hive = await connectAsync(url, {
    clientId,
    username: HIVE_SERIAL,
    password: HIVE.password,
    reconnectPeriod: 0,
  });
  await hive.subscribeAsync(ackTopic(HIVE_SERIAL), { qos: 1 });
  return hive;
}

async function publishBatch(
  hive: MqttClient,
  seq: number,
  sentAtMs: number,
  packets: WirePacket[],
): Promise<UplinkAck> {
  const acked = new Promise<UplinkAck>((resolve) => {
    const on = (_topic: string, payload: Buffer): void => {
      const ack = decodeAck(payload);
      if (ack.ackedSeq >= seq) {
        hive.off('message', on);
        resolve(ack);
      }
    };
    hive.on('message', on);
  });
  await hive.publishAsync(
    uplinkTopic(HIVE_SERIAL),
    Buffer.from(encodeUplink({ hiveSerial: HIVE_SERIAL, seq, sentAtMs, packets })),
    { qos: 1 },
  );
  return acked;
}

async function graphql(
  apiUrl: string,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const res = await fetch(`${apiUrl}/api/v3/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

describe('the platform served on its own, reached over MQTT and HTTP only', () => {
  let dir: string;
  let platform: Platform;
  let hive: MqttClient;
  let token: string;
  const clock = new VirtualClock(T0);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'occusim-platform-'));
    const model = modelWithClient();
    platform = await startPlatform(
      platformConfig({
        organisations: organisationsFromScenario(model),
        tickMs: model.tickMs,
        store: { kind: 'sqlite', path: join(dir, 'store.sqlite') },
        api: { port: 0, audience: AUDIENCE },
      }),
      { clock },
    );
    hive = await connectTestHive(platform.brokerUrl);
    const login = await fetch(`${platform.apiUrl}/api/v2/clients/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: CLIENT.clientId,
        client_secret: CLIENT.secret,
        audience: AUDIENCE,
      }),
    });
    expect(login.status).toBe(200);
    token = ((await login.json()) as { access_token: string }).access_token;
  });

  afterAll(async () => {
    await hive?.endAsync();
    await platform?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ingests the packets of a sensor created through GraphQL at once and reports its occupancy', async () => {
    const created = await graphql(
      platform.apiUrl as string,
      token,
      `
        mutation ($input: [CreateSensorInput!]!) {
          createSensors(input: $input) {
            sensor_id
            mac_address
          }
        }
      `,
      {
        input: [
          {
            floor_id: 'space_f1',
            hive_id: HIVE.id,
            name: 'new corner',
            mode: 'presence',
            model: 'tp-32x24',
            room_id: ROOM_B,
            center: [17, 5],
            height: 3,
            field_of_view: 90,
          },
        ],
      },
    );
    expect(created.errors).toBeUndefined();
    const [{ sensor_id: id, mac_address: mac }] = (
      created.data as { createSensors: Array<{ sensor_id: string; mac_address: string }> }
    ).createSensors as [{ sensor_id: string; mac_address: string }];
    const sensor: SensorModel = { ...SENSOR_PA, id, mac, roomId: ROOM_B, center: [17, 5] };
    // One person at (18, 5): in room B, seen only by the new sensor (its square is x 14–20).
    const ack = await publishBatch(hive, 1, T0 + 500, [presenceAt(sensor, T0, [[18, 5]])]);
    expect(ack.ackedSeq).toBe(1);
    expect(await platform.reads.counters()).toMatchObject({
      batchesProcessed: 1,
      packetsProcessed: 1,
      deadLettered: 0,
    });
    clock.advanceTo(T0 + 61_000);
    await platform.advanceTo(T0 + 61_000);
    expect(await platform.reads.presenceMinutes(ROOM_B)).toEqual([{ minuteMs: T0, value: 1, samples: 1 }]);
    expect(await platform.reads.deadLetters()).toEqual([]);
  });

  it('shows a room renamed through GraphQL in the next occupancy event of that room', async () => {
    const before = await platform.reads.eventEnvelopes(0, 100_000);
    const lastId = before.at(-1)?.id ?? 0;
    const renamed = await graphql(
      platform.apiUrl as string,
      token,
      `mutation { updateRooms(input: [{ id: "${ROOM_A}", name: "Alpha" }]) { id name } }`,
    );
    expect(renamed.errors).toBeUndefined();
    await publishBatch(hive, 2, T0 + 61_000, [presenceAt(SENSOR_PA, T0 + 60_000, [[7, 5]])]);
    clock.advanceTo(T0 + 121_000);
    await platform.advanceTo(T0 + 121_000);
    const after = (await platform.reads.eventEnvelopes(lastId, 100_000)).filter(
      (e) => e.envelope.metadata.room_id === ROOM_A,
    );
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((e) => e.envelope.metadata.room_name === 'Alpha')).toBe(true);
  });

  it('refuses a hive login that takes the client id the cloud used to have, and keeps the cloud subscribed', async () => {
    for (let i = 0; i < 3; i++)
      await expect(connectTestHive(platform.brokerUrl, 'occusim-cloud')).rejects.toThrow(/identifier rejected/i);
    const ack = await publishBatch(hive, 3, T0 + 122_000, [presenceAt(SENSOR_PA, T0 + 121_000, [[7, 5]])]);
    expect(ack.ackedSeq).toBe(3);
  });

  it('refuses the cloud login derived from the scenario seed', async () => {
    const attempt = connectAsync(platform.brokerUrl, {
      clientId: 'x',
      username: 'occusim-cloud',
      password: secretFor(1, 'service', 'occusim-cloud'),
      reconnectPeriod: 0,
    });
    await expect(attempt).rejects.toThrow();
  });
});

describe('a platform on its own clock (occusim serve)', () => {
  it('turns what hives publish into per-minute occupancy without anyone calling advanceTo', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-platform-'));
    // Ten simulated minutes per wall second, so the test sees minutes finalise in a moment.
    const clock = new ScaledWallClock(T0, 600);
    const model = tinyModel();
    const platform = await startPlatform(
      platformConfig({
        organisations: organisationsFromScenario(model),
        tickMs: model.tickMs,
        store: { kind: 'sqlite', path: join(dir, 's.sqlite') },
        advanceEveryMs: 50,
      }),
      { clock },
    );
    const hive = await connectTestHive(platform.brokerUrl);
    try {
      const sensedAt = Math.floor(clock.now() / 1000) * 1000;
      await publishBatch(hive, 1, sensedAt, [presenceAt(SENSOR_PA, sensedAt, [[7, 5]])]);
      const deadline = Date.now() + 5_000;
      while ((await platform.reads.presenceMinutes(ROOM_A)).length === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(await platform.reads.presenceMinutes(ROOM_A)).toEqual([
        { minuteMs: Math.floor(sensedAt / 60_000) * 60_000, value: 1, samples: 1 },
      ]);
    } finally {
      await hive.endAsync();
      await platform.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
