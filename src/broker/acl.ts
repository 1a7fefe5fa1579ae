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
 * The filter a subscription is granted as, or null when `who` may not hold it. A shared
 * subscription `$share/<group>/F` is granted as itself: `SharedSubscriptions` delivers each
 * matching message to one member of the group (Aedes 1.x has no shared subscriptions).
 */
export function effectiveSubscription(who: Principal, filter: string): string | null {
  if (who.role === 'hive') return filter === ackTopic(who.serial) ? filter : null;
  const inner = SHARE_RE.exec(filter)?.[2] ?? filter;
  return CLOUD_FILTERS.has(inner) ? filter : null;
}
