import { connect as netConnect } from 'node:net';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { EmbeddedBroker } from '../../src/broker/aedes-broker.js';
import { startBroker } from '../../src/broker/aedes-broker.js';
import { isAppError } from '../../src/core/errors.js';
import { ackTopic, heartbeatTopic, sharedFilter, allHivesFilter, uplinkTopic } from '../../src/core/topics.js';
import { CLOUD, HIVES, closed, cloudListener, eventually, hiveClient, rawClient, startTestBroker } from './support.js';

let broker: EmbeddedBroker;
const clients: MqttClient[] = [];
const track = <T extends MqttClient>(c: T): T => (clients.push(c), c);

beforeEach(async () => {
  broker = await startTestBroker({ maxPayloadBytes: 1024 });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
  await broker.close();
});

describe('embedded broker: authentication', () => {
  it('listens on a free port of 127.0.0.1 and reports its url', () => {
    expect(broker.port).toBeGreaterThan(0);
    expect(broker.url).toBe(`mqtt://127.0.0.1:${broker.port}`);
  });

  it('accepts a hive with its serial and password', async () => {
    const c = track(await hiveClient(broker.url, 0));
    expect(c.connected).toBe(true);
    expect(broker.stats().connections).toBe(1);
  });

  it('refuses a hive with a wrong password with CONNACK code 4', async () => {
    const attempt = rawClient(broker.url, { username: HIVES[0].serial, password: 'wrong' });
    await expect(attempt).rejects.toMatchObject({ code: 4 });
    expect(broker.stats()).toMatchObject({ connections: 0, refusedAuth: 1 });
  });

  it('refuses an unknown user and a missing password', async () => {
    await expect(rawClient(broker.url, { username: 'nobody', password: 'secret-a' })).rejects.toMatchObject({
      code: 4,
    });
    await expect(rawClient(broker.url, { username: HIVES[0].serial })).rejects.toMatchObject({ code: 4 });
    expect(broker.stats().refusedAuth).toBe(2);
  });

  it('refuses a zero-length client id without clean session with CONNACK 0x02 [MQTT-3.1.3-8]', async () => {
    const reply = await rawConnect(broker.port, { clean: false });
    expect([...reply]).toEqual([0x20, 0x02, 0x00, 0x02]);
    expect(broker.stats().refusedAuth).toBe(1);
  });

  it('accepts a zero-length client id with clean session', async () => {
    const reply = await rawConnect(broker.port, { clean: true });
    expect([...reply]).toEqual([0x20, 0x02, 0x00, 0x00]);
  });

  it('rejects a hive serial that could not be a topic level', async () => {
    const attempt = startBroker({ hives: [{ serial: 'a/b', password: 'x' }], services: [] });
    await expect(attempt).rejects.toSatisfy((e) => isAppError(e, 'BROKER_FAILED'));
  });
});

describe('embedded broker: topic ACL', () => {
  it('delivers a hive uplink and heartbeat to the cloud subscriber', async () => {
    const cloud = await cloudListener(broker.url);
    track(cloud.client);
    const a = track(await hiveClient(broker.url, 0));
    await a.publishAsync(uplinkTopic('HVA'), 'u', { qos: 1 });
    await a.publishAsync(heartbeatTopic('HVA'), 'h', { qos: 1 });
    await eventually(() => cloud.received.length === 2);
    expect(cloud.received.map((m) => m.topic)).toEqual([uplinkTopic('HVA'), heartbeatTopic('HVA')]);
    expect(broker.stats().published).toBe(2);
  });

  it("closes hive A's connection when it publishes to hive B's uplink, and the cloud never sees it", async () => {
    const cloud = await cloudListener(broker.url);
    track(cloud.client);
    const a = track(await hiveClient(broker.url, 0));
    a.publish(uplinkTopic('HVB'), 'forged', { qos: 1 });
    await closed(a);
    const b = track(await hiveClient(broker.url, 1));
    await b.publishAsync(uplinkTopic('HVB'), 'genuine', { qos: 1 });
    await eventually(() => cloud.received.length >= 1);
    expect(cloud.received.map((m) => m.payload.toString())).toEqual(['genuine']);
    expect(broker.stats().refusedAcl).toBe(1);
  });

  it("grants a hive its own ack topic but refuses hive B's with SUBACK 0x80", async () => {
    const a = track(await hiveClient(broker.url, 0));
    const own = await a.subscribeAsync(ackTopic('HVA'), { qos: 1 });
    expect(own.map((g) => g.qos)).toEqual([1]);
    // mqtt.js turns a 0x80 return code into a rejection carrying the SUBACK.
    await expect(a.subscribeAsync(ackTopic('HVB'), { qos: 1 })).rejects.toMatchObject({ packet: { granted: [128] } });
    await expect(a.subscribeAsync(allHivesFilter('ack'), { qos: 1 })).rejects.toMatchObject({
      packet: { granted: [128] },
    });
    expect(a.connected).toBe(true);
    expect(broker.stats().refusedAcl).toBe(2);
  });

  it('lets the cloud subscribe to shared uplink filters and receive through them', async () => {
    const cloud = track(await rawClient(broker.url, { username: CLOUD.username, password: CLOUD.password }));
    const got: string[] = [];
    cloud.on('message', (topic) => got.push(topic));
    const grant = await cloud.subscribeAsync(sharedFilter('ingest', allHivesFilter('uplink')), { qos: 1 });
    expect(grant.map((g) => g.qos)).toEqual([1]);
    const a = track(await hiveClient(broker.url, 0));
    await a.publishAsync(uplinkTopic('HVA'), 'x', { qos: 1 });
    await eventually(() => got.length === 1);
    expect(got).toEqual([uplinkTopic('HVA')]);
  });

  it('refuses the cloud a subscription to ack topics and everything else', async () => {
    const cloud = track(await rawClient(broker.url, { username: CLOUD.username, password: CLOUD.password }));
    for (const filter of ['#', allHivesFilter('ack'), ackTopic('HVA'), '$SYS/#']) {
      await expect(cloud.subscribeAsync(filter, { qos: 1 })).rejects.toMatchObject({ packet: { granted: [128] } });
    }
    expect(broker.stats().refusedAcl).toBe(4);
  });

  it('closes the connection of a client publishing to $SYS', async () => {
    const cloud = track(await rawClient(broker.url, { username: CLOUD.username, password: CLOUD.password }));
    cloud.publish('$SYS/broker/fake', 'x', { qos: 1 });
    await closed(cloud);
    expect(broker.stats()).toMatchObject({ refusedAcl: 1, published: 0 });
  });

  it('closes the connection of a cloud client publishing to an uplink topic', async () => {
    const cloud = track(await rawClient(broker.url, { username: CLOUD.username, password: CLOUD.password }));
    cloud.publish(uplinkTopic('HVA'), 'x', { qos: 1 });
    await closed(cloud);
    expect(broker.stats().refusedAcl).toBe(1);
  });

  it('refuses a payload over the limit and accepts one at the limit', async () => {
    const cloud = await cloudListener(broker.url);
    track(cloud.client);
    const a = track(await hiveClient(broker.url, 0));
    await a.publishAsync(uplinkTopic('HVA'), Buffer.alloc(1024, 1), { qos: 1 });
    a.publish(uplinkTopic('HVA'), Buffer.alloc(1025, 2), { qos: 1 });
    await closed(a);
    await eventually(() => cloud.received.length >= 1);
    expect(cloud.received.map((m) => m.payload.length)).toEqual([1024]);
    expect(broker.stats()).toMatchObject({ published: 1, refusedAcl: 1 });
  });
});

describe('embedded broker: shutdown', () => {
  it('closes promptly with clients still connected, and close is idempotent', async () => {
    const a = track(await hiveClient(broker.url, 0));
    await broker.close();
    await closed(a);
    await broker.close();
    await expect(rawClient(broker.url, { username: 'HVA', password: 'secret-a' })).rejects.toThrow();
  });
});

/** Sends a hand-built MQTT 3.1.1 CONNECT with an empty client id (mqtt.js refuses to). */
async function rawConnect(port: number, opts: { clean: boolean }): Promise<Buffer> {
  const str = (s: string): Buffer => Buffer.concat([Buffer.from([0, Buffer.byteLength(s)]), Buffer.from(s)]);
  const flags = 0x80 | 0x40 | (opts.clean ? 0x02 : 0);
  const body = Buffer.concat([
    str('MQTT'),
    Buffer.from([4, flags, 0, 60]),
    str(''),
    str(HIVES[0].serial),
    str(HIVES[0].password),
  ]);
  const socket = netConnect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(Buffer.concat([Buffer.from([0x10, body.length]), body]));
  const [reply] = (await once(socket, 'data')) as [Buffer];
  socket.destroy();
  return reply.subarray(0, 4);
}
