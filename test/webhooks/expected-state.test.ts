import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/store/webhook-port.js';
import { expectedState } from '../../src/webhooks/expected-state.js';
import type { Subscription } from '../../src/webhooks/subscription.js';

const T0 = Date.UTC(2026, 2, 2, 8, 0);
const delivery = (id: number, eventId: string, value: number, state: Delivery['state']): Delivery => ({
  id,
  subscriptionId: 'wh_1',
  eventId,
  eventType: 'ROOM_OCCUPANCY_1M',
  eventTimestampMs: T0,
  body: JSON.stringify({
    id: eventId,
    type: 'ROOM_OCCUPANCY_1M',
    timestamp: T0,
    version: 'v1.0.0',
    metadata: { room_id: 'room_a' },
    data: value,
  }),
  enqueuedAtMs: T0,
  nextAttemptMs: T0,
  attempts: 1,
  state,
  lastError: null,
  deliveredAtMs: state === 'delivered' ? T0 : null,
});

describe('the expected consumer state', () => {
  it('folds the delivered rows in outbox order, leaving out what the endpoint never acknowledged', async () => {
    // Data rows as the store's `deliveries` lists them (id order); revision 2 is still pending.
    const rows = [
      delivery(1, 'e0', 3, 'delivered'),
      delivery(2, 'e1', 4, 'delivered'),
      delivery(3, 'e2', 9, 'pending'),
      delivery(4, 'e3', 7, 'dead'),
    ];
    const store = { deliveries: (id: string) => Promise.resolve(id === 'wh_1' ? rows : []) };
    const subs = [
      { id: 'wh_1', name: 'rooms' },
      { id: 'wh_2', name: 'empty' },
    ] as unknown as Subscription[];
    expect(await expectedState(store, subs)).toEqual([
      { subscription: 'rooms', type: 'ROOM_OCCUPANCY_1M', subject: 'room_a', minute: T0, value: 4 },
    ]);
  });
});
