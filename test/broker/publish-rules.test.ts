import { connect as netConnect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { EmbeddedBroker } from '../../src/broker/aedes-broker.js';
import { heartbeatTopic, uplinkTopic } from '../../src/core/topics.js';
import { closed, cloudListener, HIVES, hiveClient, rawClient, startTestBroker } from './support.js';

let broker: EmbeddedBroker;
const clients: MqttClient[] = [];
const track = <T extends MqttClient>(c: T): T => (clients.push(c), c);

beforeEach(async () => {
  broker = await startTestBroker();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
  await broker.close();
});

const str = (s: string): number[] => [s.length >> 8, s.length & 0xff, ...Buffer.from(s)];

/** A raw MQTT 3.1.1 session: CONNECT as hive A, then whatever bytes the test writes. */
async function rawHive(): Promise<Socket> {
  const socket = netConnect(broker.port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((r) => socket.once('connect', r));
  const body = [
    ...str('MQTT'),
    4,
    0xc2,
    0,
    60,
    ...str(`hive-${HIVES[0].serial}`),
    ...str(HIVES[0].serial),
    ...str(HIVES[0].password),
  ];
  socket.write(Buffer.from([0x10, body.length, ...body]));
  await new Promise((r) => socket.once('data', r));
  return socket;
}

describe('embedded broker: publish rules of the protocol', () => {
  it('closes a QoS 1 PUBLISH with packet identifier 0 [MQTT-2.3.1-1]', async () => {
    const socket = await rawHive();
    const gone = new Promise((r) => socket.once('close', r));
    const body = [...str(uplinkTopic(HIVES[0].serial)), 0, 0, 1, 2, 3];
    socket.write(Buffer.from([0x32, body.length, ...body]));
    await gone;
    expect(broker.stats()).toMatchObject({ published: 0, refusedAcl: 1 });
  });

  it('refuses a retained uplink, so it is never replayed to a later subscriber', async () => {
    const hive = track(await hiveClient(broker.url, 0));
    hive.publish(uplinkTopic(HIVES[0].serial), Buffer.from([1, 2, 3]), { qos: 1, retain: true });
    await closed(hive);
    const cloud = await cloudListener(broker.url);
    track(cloud.client);
    await new Promise((r) => setTimeout(r, 100));
    expect(cloud.received).toEqual([]);
    expect(broker.stats().refusedAcl).toBe(1);
  });

  it('closes a hive publishing a 100 KiB heartbeat: the protocol’s limit is 64 KiB', async () => {
    const hive = track(await hiveClient(broker.url, 0));
    hive.publish(heartbeatTopic(HIVES[0].serial), Buffer.alloc(100 * 1024), { qos: 1 });
    await closed(hive);
    expect(broker.stats()).toMatchObject({ published: 0, refusedAcl: 1 });
  });

  it('refuses an MQTT 5 CONNECT with CONNACK 1 (unacceptable protocol version): Aedes 1.x speaks 3.1.1', async () => {
    await expect(
      rawClient(broker.url, { protocolVersion: 5, username: HIVES[0].serial, password: HIVES[0].password }),
    ).rejects.toMatchObject({ code: 1 });
  });
});
