import type { Socket } from 'node:net';
import { connectAsync, type MqttClient } from 'mqtt';
import { AppError, ErrorCodes } from '../core/errors.js';
import { ackTopic, allHivesFilter, heartbeatTopic, sharedFilter, uplinkTopic } from '../core/topics.js';
import { encodeAck } from '../proto/codec.js';
import type { UplinkAck } from '../proto/messages.js';

/**
 * MQTT adapter of the cloud ingest: subscribes to every hive's uplink topic (QoS 1), hands
 * each message to `onMessage` on arrival, in arrival order, and publishes the ack it resolves
 * to (QoS 1) on the hive's ack topic, once `onMessage` has stored the batch.
 */
export interface MqttIngestOptions {
  brokerUrl: string;
  username: string;
  password: string;
  clientId: string;
  /**
   * MQTT 5 shared-subscription group (`$share/<group>/…`): the broker splits the hives'
   * messages across every ingest process subscribed in the group. Omit for one process.
   */
  shareGroup?: string;
  /**
   * Subscribe to these hives' topics only (a simulator shard's own platform, docs/scale-out.md:
   * other shards' hives share the broker). Absent: every hive's.
   */
  hiveSerials?: readonly string[];
  /** Called in arrival order; must not reject (a failure resolves to null). */
  onMessage(topic: string, payload: Uint8Array): Promise<UplinkAck | null>;
  /** When given, the ingest also subscribes to every hive's heartbeat topic and hands HiveHeartbeat payloads here (never to onMessage). */
  onHeartbeat?(topic: string, payload: Uint8Array): void;
}

export interface MqttIngest {
  close(): Promise<void>;
  /** Cut off at once, as a killed process is: no DISCONNECT, no ack still queued goes out. */
  kill(): Promise<void>;
}

async function connect(o: MqttIngestOptions): Promise<MqttClient> {
  try {
    // clean session: after a reconnect, hives retransmit every unacked batch themselves.
    return await connectAsync(
      o.brokerUrl,
      { clientId: o.clientId, username: o.username, password: o.password, clean: true, reconnectPeriod: 1000 },
      false,
    );
  } catch (err) {
    throw new AppError(
      ErrorCodes.CLOUD_FAILED,
      `cloud ingest cannot connect to ${o.brokerUrl}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

function disableNagle(client: MqttClient): void {
  (client.stream as Partial<Socket>).setNoDelay?.(true);
}

async function subscribe(client: MqttClient, filter: string): Promise<void> {
  const grants = await client.subscribeAsync(filter, { qos: 1 });
  const refused = grants.find((g) => g.qos !== 0 && g.qos !== 1 && g.qos !== 2);
  if (refused) throw new AppError(ErrorCodes.CLOUD_FAILED, `subscription to ${filter} refused by the broker`);
}

export async function startMqttIngest(o: MqttIngestOptions): Promise<MqttIngest> {
  const client = await connect(o);
  // Acks are small writes a hive waits on: Nagle would hold each one back ~40 ms.
  disableNagle(client);
  client.on('connect', () => disableNagle(client));
  let closing = false;
  client.on('message', (topic, payload) => {
    if (o.onHeartbeat && topic.endsWith('/heartbeat')) return o.onHeartbeat(topic, payload);
    void o.onMessage(topic, payload).then((ack) => {
      if (ack === null) return;
      client.publishAsync(ackTopic(ack.hiveSerial), Buffer.from(encodeAck(ack)), { qos: 1 }).catch(() => {
        // Nothing to do: a lost ack is recovered end to end (the hive retransmits the batch,
        // the cloud counts it as a duplicate and acks again).
      });
    });
  });
  try {
    const topics = (kind: 'uplink' | 'heartbeat'): string[] =>
      o.hiveSerials === undefined
        ? [allHivesFilter(kind)]
        : o.hiveSerials.map((s) => (kind === 'uplink' ? uplinkTopic(s) : heartbeatTopic(s)));
    const shared = (filter: string): string =>
      o.shareGroup === undefined ? filter : sharedFilter(o.shareGroup, filter);
    for (const filter of topics('uplink')) await subscribe(client, shared(filter));
    // Shared too: each heartbeat written once, by whichever process the broker hands it to.
    if (o.onHeartbeat) for (const filter of topics('heartbeat')) await subscribe(client, shared(filter));
  } catch (err) {
    await client.endAsync(true);
    throw err instanceof AppError
      ? err
      : new AppError(ErrorCodes.CLOUD_FAILED, `cloud ingest cannot subscribe: ${(err as Error).message}`, {
          cause: err,
        });
  }
  return {
    async close() {
      if (closing) return;
      closing = true;
      await client.endAsync();
    },
    async kill() {
      closing = true;
      client.removeAllListeners('message');
      // Forced: the socket is destroyed without a DISCONNECT (the broker sees a dropped client).
      await client.endAsync(true);
    },
  };
}
