import { ackTopic, allHivesFilter, heartbeatTopic, parseHiveTopic, uplinkTopic } from '../core/topics.js';
import type { Principal } from './credentials.js';

/**
 * Topic access rules of the embedded broker. Pure functions of (principal, topic), so the
 * policy reads (and is tested) without a socket.
 */

const SYS_PREFIX = '$SYS/';
const SHARE_RE = /^\$share\/([^/+#]+)\/(.+)$/;

/** Filters the cloud ingest may subscribe to (plain or inside `$share/<group>/`). */
const CLOUD_FILTERS: ReadonlySet<string> = new Set([allHivesFilter('uplink'), allHivesFilter('heartbeat')]);

/**
 * `$SYS/` belongs to the server (MQTT 3.1.1 §4.7.2: topics starting with '$' are for server
 * use); no client publishes there, whatever its role.
 */
export function isSystemTopic(topic: string): boolean {
  return topic.startsWith(SYS_PREFIX) || topic === '$SYS';
}

/** May `who` publish to `topic`? Hives: own uplink and heartbeat; cloud: ack topics only. */
export function mayPublish(who: Principal, topic: string): boolean {
  if (isSystemTopic(topic)) return false;
  if (who.role === 'hive') return topic === uplinkTopic(who.serial) || topic === heartbeatTopic(who.serial);
  return parseHiveTopic(topic)?.kind === 'ack';
}

/**
 * The filter a subscription really matches on this broker, or null when `who` may not hold
 * it. Aedes 1.x implements no shared subscriptions, so `$share/<group>/F` is granted as plain
 * F: every ingest instance then sees every message (acks are idempotent; the cloud dedupes).
 */
export function effectiveSubscription(who: Principal, filter: string): string | null {
  if (who.role === 'hive') return filter === ackTopic(who.serial) ? filter : null;
  const inner = SHARE_RE.exec(filter)?.[2] ?? filter;
  return CLOUD_FILTERS.has(inner) ? inner : null;
}
