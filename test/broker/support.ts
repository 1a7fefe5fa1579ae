import { connectAsync } from 'mqtt';
import type { IClientOptions, MqttClient } from 'mqtt';
import { startBroker } from '../../src/broker/aedes-broker.js';
import type { BrokerOptions, EmbeddedBroker } from '../../src/broker/aedes-broker.js';
import { ackTopic, allHivesFilter } from '../../src/core/topics.js';
import { decodeUplink, encodeAck } from '../../src/proto/codec.js';
import type { UplinkBatch } from '../../src/proto/messages.js';

/** Test fixtures shared by the broker and hive tests: real TCP on 127.0.0.1, port 0. */
export const HIVES = [
  { serial: 'HVA', password: 'secret-a' },
  { serial: 'HVB', password: 'secret-b' },
] as const;
export const CLOUD = { username: 'cloud-ingest', password: 'cloud-pass', role: 'cloud' as const };

export function startTestBroker(extra: Partial<BrokerOptions> = {}): Promise<EmbeddedBroker> {
  return startBroker({ hives: HIVES, services: [CLOUD], ...extra });
}

/** A raw mqtt.js client that does not reconnect, so a refusal shows as one 'close'. */
export function rawClient(url: string, opts: IClientOptions): Promise<MqttClient> {
  return connectAsync(url, { reconnectPeriod: 0, ...opts }, false);
}

export function hiveClient(url: string, index: 0 | 1): Promise<MqttClient> {
  const hive = HIVES[index];
  return rawClient(url, { username: hive.serial, password: hive.password, clientId: `hive-${hive.serial}` });
}

/** Resolves when the client's connection closes (the broker's way of refusing a PUBLISH). */
export async function closed(client: MqttClient): Promise<void> {
  if (!client.connected) return;
  await new Promise<void>((resolve) => client.once('close', () => resolve()));
}

export interface ReceivedMessage {
  topic: string;
  payload: Buffer;
}

/** A cloud-side subscriber that records every uplink and heartbeat it receives. */
export async function cloudListener(url: string): Promise<{ client: MqttClient; received: ReceivedMessage[] }> {
  const client = await rawClient(url, { username: CLOUD.username, password: CLOUD.password, clientId: 'cloud-test' });
  const received: ReceivedMessage[] = [];
  client.on('message', (topic, payload) => received.push({ topic, payload }));
  await client.subscribeAsync([allHivesFilter('uplink'), allHivesFilter('heartbeat')], { qos: 1 });
  return { client, received };
}

/**
 * A minimal cloud ingest: decodes each uplink and acks its seq. With `hold`, acks wait until
 * `release()` so a test can observe the hive before the ack exists.
 */
export async function ackingCloud(
  url: string,
  opts: { hold?: boolean } = {},
): Promise<{
  client: MqttClient;
  batches: UplinkBatch[];
  release(): Promise<void>;
}> {
  const client = await rawClient(url, { username: CLOUD.username, password: CLOUD.password, clientId: 'cloud-acker' });
  const batches: UplinkBatch[] = [];
  const held: UplinkBatch[] = [];
  const sendAck = (b: UplinkBatch): Promise<unknown> =>
    client.publishAsync(
      ackTopic(b.hiveSerial),
      Buffer.from(encodeAck({ hiveSerial: b.hiveSerial, ackedSeq: b.seq, ackedAtMs: b.sentAtMs })),
      { qos: 1 },
    );
  client.on('message', (_topic, payload) => {
    const batch = decodeUplink(payload);
    batches.push(batch);
    if (opts.hold === true) held.push(batch);
    else void sendAck(batch);
  });
  await client.subscribeAsync(allHivesFilter('uplink'), { qos: 1 });
  const release = async (): Promise<void> => {
    await Promise.all(held.splice(0).map(sendAck));
  };
  return { client, batches, release };
}

/** Polls until `check` holds (for events with no promise to await), failing after `ms`. */
export async function eventually(check: () => boolean, ms = 2000): Promise<void> {
  for (let waited = 0; !check(); waited += 5) {
    if (waited >= ms) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
