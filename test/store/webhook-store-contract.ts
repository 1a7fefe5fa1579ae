import { describe, expect, it } from 'vitest';
import type { AsyncWebhookStore, DeliveryInsert } from '../../src/store/webhook-port.js';

/**
 * What every webhook store does (SQLite, PostgreSQL), through the asynchronous port: the
 * delivery outbox's enqueue (in order, a repeat of (subscription, event) skipped, its first
 * body kept), the bodies kept byte for byte through every outcome, due order and keyset pages,
 * replays, pruning and deletion. `open()` gives a fresh, empty store.
 */
export const delivery = (
  eventId: string,
  ts: number,
  sub = 'webhook_1',
  body = `{"id":"${eventId}","pad":"${'x'.repeat(500)}"}`,
): DeliveryInsert => ({
  subscriptionId: sub,
  eventId,
  eventType: 'ROOM_OCCUPANCY',
  eventTimestampMs: ts,
  body,
  enqueuedAtMs: 1000,
  nextAttemptMs: 1000,
});

export function describeWebhookStoreContract(
  name: string,
  open: () => Promise<AsyncWebhookStore>,
  skip: string | null = null,
): void {
  describe.skipIf(skip !== null)(`webhook store contract: ${name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it('enqueues in order with each body as given, skipping repeats within and across calls and keeping the first body', async () => {
      const s = await open();
      try {
        // 150 rows: statements of 64 and smaller ones; a repeat inside a full statement and one of an earlier call.
        const many = Array.from({ length: 150 }, (_, i) => delivery(`event_${String(i).padStart(3, '0')}`, 1000 + i));
        await s.enqueue(many.slice(0, 10));
        await s.enqueue([
          ...many.slice(10, 40),
          delivery('event_005', 1005, 'webhook_1', '{"other":1}'),
          many[20] as DeliveryInsert,
          ...many.slice(40),
        ]);
        await s.enqueue([delivery('event_000', 1000, 'webhook_2', '{"sub":2}')]);
        const rows = await s.deliveries('webhook_1');
        expect(rows.map((d) => d.eventId)).toEqual(many.map((d) => d.eventId));
        expect(rows.map((d) => d.body)).toEqual(many.map((d) => d.body));
        expect(new Set(rows.map((d) => d.id)).size).toBe(150);
        expect(rows.map((d) => d.id)).toEqual([...rows.map((d) => d.id)].sort((a, b) => a - b));
        expect((await s.deliveries('webhook_2')).map((d) => [d.eventId, d.body])).toEqual([['event_000', '{"sub":2}']]);
        expect(rows[0]).toMatchObject({
          subscriptionId: 'webhook_1',
          eventType: 'ROOM_OCCUPANCY',
          eventTimestampMs: 1000,
          enqueuedAtMs: 1000,
          nextAttemptMs: 1000,
          attempts: 0,
          state: 'pending',
          lastError: null,
          deliveredAtMs: null,
        });
      } finally {
        await s.close();
      }
    });

    it('reads due rounds with their bodies by (due instant, event time, event id), and keeps the bodies through every outcome', async () => {
      const s = await open();
      try {
        await s.enqueue([
          delivery('event_c', 20),
          delivery('event_a', 20),
          delivery('event_b', 10),
          delivery('event_d', 30),
        ]);
        const first = await s.due('webhook_1', 1000, 2);
        expect(first.map((d) => d.eventId)).toEqual(['event_b', 'event_a']);
        expect(first.map((d) => d.body)).toEqual([delivery('event_b', 10).body, delivery('event_a', 20).body]);
        const rest = await s.dueAfter('webhook_1', 1000, first[1] as (typeof first)[number], 10);
        expect(rest.map((d) => d.eventId)).toEqual(['event_c', 'event_d']);
        const [b, a] = first as [(typeof first)[number], (typeof first)[number]];
        const [c, d] = rest as [(typeof rest)[number], (typeof rest)[number]];
        await s.recordAttempts([
          { id: b.id, result: 'delivered', atMs: 1100 },
          { id: a.id, result: 'delivered', atMs: 1100 },
          { id: c.id, result: 'retry', nextAttemptMs: 5000, error: 'HTTP 500' },
          { id: d.id, result: 'dead', error: 'HTTP 404' },
        ]);
        expect(await s.counts('webhook_1')).toEqual({ pending: 1, delivered: 2, dead: 1 });
        expect(await s.nextDueMs(['webhook_1'])).toBe(5000);
        expect((await s.deadLetters('webhook_1')).map((x) => [x.eventId, x.body, x.lastError])).toEqual([
          ['event_d', delivery('event_d', 30).body, 'HTTP 404'],
        ]);
        const all = await s.deliveries('webhook_1');
        expect(all.map((x) => [x.eventId, x.state, x.attempts, x.deliveredAtMs])).toEqual([
          ['event_c', 'pending', 1, null],
          ['event_a', 'delivered', 1, 1100],
          ['event_b', 'delivered', 1, 1100],
          ['event_d', 'dead', 1, null],
        ]);
        expect(all.map((x) => x.body)).toEqual(
          ['event_c', 'event_a', 'event_b', 'event_d'].map((e) => delivery(e, 0).body),
        );
        // A replay sends the same bytes again.
        expect(await s.replayRange(null, 0, 25, 6000)).toBe(2);
        expect(await s.replayRange('webhook_9', 0, 100, 6000)).toBe(0);
        expect(await s.replayDead('webhook_1', 6000)).toBe(1);
        expect((await s.due('webhook_1', 6000, 10)).map((x) => [x.eventId, x.attempts, x.body])).toEqual([
          ['event_c', 1, delivery('event_c', 0).body], // its retry is due at 5000, the replayed ones at 6000
          ['event_b', 0, delivery('event_b', 0).body],
          ['event_a', 0, delivery('event_a', 0).body],
          ['event_d', 0, delivery('event_d', 0).body],
        ]);
      } finally {
        await s.close();
      }
    });

    it('prunes delivered rows of old events of every subscription, and drops a deleted subscription’s undelivered rows only', async () => {
      const s = await open();
      try {
        await s.putSubscription({ id: 'webhook_1', orgId: 'org_1', body: '{}' });
        await s.enqueue([
          delivery('event_a', 10),
          delivery('event_b', 20),
          delivery('event_c', 500),
          delivery('event_a', 10, 'webhook_2'),
          delivery('event_z', 30, 'webhook_2'),
        ]);
        const one = await s.due('webhook_1', 1000, 10);
        const two = await s.due('webhook_2', 1000, 10);
        await s.recordAttempts(
          [...one, ...two]
            .filter((d) => d.eventId !== 'event_b')
            .map((d) => ({ id: d.id, result: 'delivered' as const, atMs: 1000 })),
        );
        expect(await s.pruneDelivered(100)).toBe(3);
        expect((await s.deliveries('webhook_1')).map((x) => [x.eventId, x.state])).toEqual([
          ['event_b', 'pending'],
          ['event_c', 'delivered'],
        ]);
        expect(await s.deliveries('webhook_2')).toEqual([]);
        expect(await s.deleteSubscription('webhook_1')).toBe(true);
        expect((await s.deliveries('webhook_1')).map((x) => x.eventId)).toEqual(['event_c']);
        // The deleted rows' bodies went with them: the same events enqueued again carry their new bodies.
        await s.enqueue([
          delivery('event_b', 20, 'webhook_1', '{"again":1}'),
          delivery('event_a', 10, 'webhook_2', '{"again":2}'),
        ]);
        expect((await s.deliveries('webhook_1')).map((x) => [x.eventId, x.body])).toEqual([
          ['event_c', delivery('event_c', 0).body],
          ['event_b', '{"again":1}'],
        ]);
        expect((await s.deliveries('webhook_2')).map((x) => [x.eventId, x.body])).toEqual([['event_a', '{"again":2}']]);
      } finally {
        await s.close();
      }
    });
  });
}
