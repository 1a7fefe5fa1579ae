import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/cloud/events.js';
import { ValueChangeGate } from '../../src/webhooks/value-change.js';

const room = (value: number, timestamp: number, type = 'ROOM_OCCUPANCY_1M', roomId = 'room_1'): EventEnvelope => ({
  id: `event_${type}_${roomId}_${timestamp}`,
  type,
  timestamp,
  version: 'v1.0.0',
  metadata: { org_id: 'org_1', floor_id: 'space_1', room_id: roomId },
  data: value,
});

describe('send_on_value_change', () => {
  it('sends a space\'s value only when it differs from the last one sent for that space and type', () => {
    const g = new ValueChangeGate();
    expect([room(1, 0), room(1, 60_000), room(2, 120_000), room(2, 180_000), room(1, 240_000)].map((e) => g.admit('w1', e, 0))).toEqual([true, false, true, false, true]);
  });

  it('always sends a revision of an earlier minute: it exists because that minute changed', () => {
    const g = new ValueChangeGate();
    expect(g.admit('w1', room(1, 0), 0)).toBe(true);
    expect(g.admit('w1', room(1, 0), 1)).toBe(true);
  });

  it('keeps spaces, types and subscriptions apart', () => {
    const g = new ValueChangeGate();
    expect(g.admit('w1', room(1, 0), 0)).toBe(true);
    expect(g.admit('w1', room(1, 0, 'ROOM_OCCUPANCY_1M', 'room_2'), 0)).toBe(true);
    expect(g.admit('w1', room(1, 0, 'ROOM_OCCUPANCY'), 0)).toBe(true);
    expect(g.admit('w2', room(1, 0), 0)).toBe(true);
    expect(g.admit('w1', room(1, 60_000), 0)).toBe(false);
  });
});
