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
  it("sends a space's value only when it differs from the last one sent for that space and type", () => {
    const g = new ValueChangeGate();
    expect(
      [room(1, 0), room(1, 60_000), room(2, 120_000), room(2, 180_000), room(1, 240_000)].map((e) =>
        g.admit('w1', e, 0),
      ),
    ).toEqual([true, false, true, false, true]);
  });

  it('sends a revision of a minute when its value changed and spares the repeats of rule 1', () => {
    const g = new ValueChangeGate();
    // Minute 0 first at 1, then recomputed each minute: 1 (a repeat), 2 (changed), 2, 2, then 1.
    expect([0, 1, 2, 3, 4, 5].map((rev) => g.admit('w1', room([1, 1, 2, 2, 2, 1][rev]!, 0), rev))).toEqual([
      true,
      false,
      true,
      false,
      false,
      true,
    ]);
    // A minute's first value still compares with the space's last value, whatever minute it was for.
    expect(g.admit('w1', room(1, 60_000), 0)).toBe(false);
    expect(g.admit('w1', room(1, 60_000), 1)).toBe(false);
  });

  it('sends a revision of a minute it has no value for (after a restart): a duplicate at most, never a lost change', () => {
    const g = new ValueChangeGate();
    g.load([{ subscriptionId: 'w1', subject: 'ROOM_OCCUPANCY_1M|room_1', value: '1' }]);
    expect(g.admit('w1', room(1, 0), 3)).toBe(true);
    expect(g.admit('w1', room(1, 0), 4)).toBe(false);
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
