/**
 * MQTT topics, built in this one module (protocol doc: docs/protocol.md).
 * Hive serials are restricted to [A-Za-z0-9_-] so they never contain wildcards or '/'.
 */
export const TOPIC_ROOT = 'occusim/v1/hives';

export type HiveTopicKind = 'uplink' | 'ack' | 'heartbeat';

const SERIAL_RE = /^[A-Za-z0-9_-]{1,64}$/;

export function isValidSerial(serial: string): boolean {
  return SERIAL_RE.test(serial);
}

function hiveTopic(serial: string, kind: HiveTopicKind): string {
  if (!isValidSerial(serial)) throw new RangeError(`invalid hive serial for a topic: ${JSON.stringify(serial)}`);
  return `${TOPIC_ROOT}/${serial}/${kind}`;
}

/** Hive → cloud: HiveUplink batches (QoS 1). */
export const uplinkTopic = (serial: string): string => hiveTopic(serial, 'uplink');
/** Cloud → hive: UplinkAck (QoS 1). */
export const ackTopic = (serial: string): string => hiveTopic(serial, 'ack');
/** Hive → cloud: heartbeat/status. */
export const heartbeatTopic = (serial: string): string => hiveTopic(serial, 'heartbeat');

/** Subscription filter for one kind of message from every hive. */
export const allHivesFilter = (kind: HiveTopicKind): string => `${TOPIC_ROOT}/+/${kind}`;

/** MQTT v5 shared subscription, so several ingest processes can split the load. */
export const sharedFilter = (group: string, filter: string): string => `$share/${group}/${filter}`;

export interface ParsedHiveTopic {
  serial: string;
  kind: HiveTopicKind;
}

/** Parses a hive topic; returns null for anything that is not one. */
export function parseHiveTopic(topic: string): ParsedHiveTopic | null {
  const prefix = `${TOPIC_ROOT}/`;
  if (!topic.startsWith(prefix)) return null;
  const rest = topic.slice(prefix.length).split('/');
  if (rest.length !== 2) return null;
  const [serial, kind] = rest as [string, string];
  if (!isValidSerial(serial)) return null;
  if (kind !== 'uplink' && kind !== 'ack' && kind !== 'heartbeat') return null;
  return { serial, kind };
}
