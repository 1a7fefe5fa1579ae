import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/cloud/events.js';
import type { DeliveryInsert } from '../../src/cloud/store/webhook-port.js';
import { bodyOf, FanOut } from '../../src/webhooks/fan-out.js';
import type { Subscription } from '../../src/webhooks/subscription.js';

const room: EventEnvelope = { id: 'event_r', type: 'ROOM_OCCUPANCY_1M', timestamp: 60_000, version: 'v1.0.0', metadata: { org_id: 'org_1', floor_id: 'space_1', room_id: 'room_1' }, data: 2 };

describe('webhook request body', () => {
  it('is the envelope as JSON.stringify writes it, sensor ids bare in the metadata', () => {
    const e = room;
    expect(bodyOf(e)).toBe(JSON.stringify(e));
    const sensor: EventEnvelope = { id: 'event_s', type: 'TRAFFIC', timestamp: 5, version: 'v1.0.0', metadata: { org_id: 'org_1', sensor_id: 'sensor_ab12' }, data: { in: 1, out: 0 } };
    expect(JSON.parse(bodyOf(sensor))).toEqual({ ...sensor, metadata: { org_id: 'org_1', sensor_id: 'ab12' } });
    expect(bodyOf({ ...sensor, data: { local: [[0.5, 0.25]], world: [[1.5, 2]] } })).toBe(JSON.stringify({ ...sensor, metadata: { org_id: 'org_1', sensor_id: 'ab12' }, data: { local: [[0.5, 0.25]], world: [[1.5, 2]] } }));
  });
});

describe('webhook fan-out', () => {
  const sub = (id: string, orgId: string, filters: Subscription['filters'] = {}): Subscription =>
    ({ id, orgId, name: id, eventTypes: ['ROOM_OCCUPANCY_1M'], status: 'ENABLED', filters, sendOnValueChange: false, endpoint: { url: 'https://x.test/h', httpTimeoutS: 10, apiKey: null, basicAuth: null }, secrets: [], failingSinceMs: null, disabledReason: null }) as unknown as Subscription;

  it('gives a subscription its own organisation\'s events only, with no filters or filters naming the other\'s ids (issue 16)', () => {
    const out: DeliveryInsert[] = [];
    new FanOut().deliveries([sub('mine', 'org_1'), sub('unfiltered', 'org_2'), sub('names-theirs', 'org_2', { org_ids: ['org_1'], room_ids: ['room_1'] })], room, 0, 0, out);
    expect(out.map((d) => d.subscriptionId)).toEqual(['mine']);
  });
});
