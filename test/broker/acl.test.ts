import { describe, expect, it } from 'vitest';
import { effectiveSubscription, isSystemTopic, mayPublish } from '../../src/broker/acl.js';
import type { Principal } from '../../src/broker/credentials.js';
import { ackTopic, allHivesFilter, heartbeatTopic, sharedFilter, uplinkTopic } from '../../src/core/topics.js';

const hiveA: Principal = { role: 'hive', serial: 'HVA' };
const cloud: Principal = { role: 'cloud', username: 'ingest' };

describe('broker ACL', () => {
  it('lets a hive publish only to its own uplink and heartbeat topics', () => {
    expect(mayPublish(hiveA, uplinkTopic('HVA'))).toBe(true);
    expect(mayPublish(hiveA, heartbeatTopic('HVA'))).toBe(true);
    expect(mayPublish(hiveA, ackTopic('HVA'))).toBe(false);
    expect(mayPublish(hiveA, uplinkTopic('HVB'))).toBe(false);
    expect(mayPublish(hiveA, 'occusim/v1/hives/HVA/uplink/extra')).toBe(false);
  });

  it('lets the cloud publish only to ack topics', () => {
    expect(mayPublish(cloud, ackTopic('HVA'))).toBe(true);
    expect(mayPublish(cloud, uplinkTopic('HVA'))).toBe(false);
    expect(mayPublish(cloud, heartbeatTopic('HVA'))).toBe(false);
    expect(mayPublish(cloud, 'other/topic')).toBe(false);
  });

  it('lets nobody publish to $SYS', () => {
    expect(isSystemTopic('$SYS/broker/uptime')).toBe(true);
    expect(isSystemTopic('SYS/x')).toBe(false);
    expect(mayPublish(cloud, '$SYS/x')).toBe(false);
    expect(mayPublish(hiveA, '$SYS/x')).toBe(false);
  });

  it('lets a hive subscribe only to its own ack topic', () => {
    expect(effectiveSubscription(hiveA, ackTopic('HVA'))).toBe(ackTopic('HVA'));
    expect(effectiveSubscription(hiveA, ackTopic('HVB'))).toBeNull();
    expect(effectiveSubscription(hiveA, allHivesFilter('ack'))).toBeNull();
    expect(effectiveSubscription(hiveA, '#')).toBeNull();
  });

  it('lets the cloud subscribe to all uplinks and heartbeats, plainly or shared', () => {
    expect(effectiveSubscription(cloud, allHivesFilter('uplink'))).toBe(allHivesFilter('uplink'));
    expect(effectiveSubscription(cloud, allHivesFilter('heartbeat'))).toBe(allHivesFilter('heartbeat'));
    // Granted as the shared filter itself: the broker's SharedSubscriptions serves it.
    expect(effectiveSubscription(cloud, sharedFilter('g1', allHivesFilter('uplink')))).toBe(
      sharedFilter('g1', allHivesFilter('uplink')),
    );
    expect(effectiveSubscription(cloud, sharedFilter('g1', allHivesFilter('heartbeat')))).toBe(
      sharedFilter('g1', allHivesFilter('heartbeat')),
    );
  });

  it('refuses the cloud everything else, including ack topics and malformed shares', () => {
    for (const f of [
      allHivesFilter('ack'),
      '#',
      'occusim/#',
      '$SYS/#',
      sharedFilter('g', '#'),
      `$share//${allHivesFilter('uplink')}`,
      `$share/g+/${allHivesFilter('uplink')}`,
    ]) {
      expect(effectiveSubscription(cloud, f), f).toBeNull();
    }
  });
});
