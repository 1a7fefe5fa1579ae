import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/cloud/events.js';
import { bodyOf } from '../../src/webhooks/fan-out.js';

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
