import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import type { DeliveryInsert } from '../../src/store/webhook-port.js';

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-'));
  dirs.push(dir);
  return join(dir, 'cloud.db');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const delivery = (eventId: string, ts: number, sub = 'webhook_1'): DeliveryInsert => ({
  subscriptionId: sub,
  eventId,
  eventType: 'ROOM_OCCUPANCY',
  eventTimestampMs: ts,
  body: `{"id":"${eventId}"}`,
  enqueuedAtMs: 1000,
  nextAttemptMs: 1000,
});

describe('SQLite webhook store', () => {
  it('keeps subscriptions and pending deliveries across a restart, in creation order', () => {
    const path = tempDb();
    const a = new SqliteWebhookStore(path);
    a.putSubscription({ id: 'webhook_2', orgId: 'org_1', body: '{"n":2}' });
    a.putSubscription({ id: 'webhook_1', orgId: 'org_1', body: '{"n":1}' });
    a.putSubscription({ id: 'webhook_2', orgId: 'org_1', body: '{"n":3}' });
    a.enqueue([delivery('event_a', 10), delivery('event_b', 20)], { key: 'webhook_outbox', value: 7 });
    a.close();
    const b = new SqliteWebhookStore(path);
    expect(b.subscriptions()).toEqual([
      { id: 'webhook_2', orgId: 'org_1', body: '{"n":3}' },
      { id: 'webhook_1', orgId: 'org_1', body: '{"n":1}' },
    ]);
    expect(b.cursor('webhook_outbox')).toBe(7);
    expect(b.due('webhook_1', 1000, 10).map((d) => d.eventId)).toEqual(['event_a', 'event_b']);
    b.close();
  });

  it('shares the file with the pipeline store, whichever opens it first', () => {
    const path = tempDb();
    const hooks = new SqliteWebhookStore(path);
    const store = new SqliteStore(path);
    store.setState('finalised_before', 5);
    expect(hooks.cursor('finalised_before')).toBe(5);
    hooks.close();
    store.close();
  });

  it('keeps send_on_value_change values across a restart, written with the enqueue, dropped with their subscription', () => {
    const path = tempDb();
    const a = new SqliteWebhookStore(path);
    a.putSubscription({ id: 'webhook_1', orgId: 'org_1', body: '{}' });
    a.enqueue([delivery('event_a', 10)], { key: 'webhook_outbox', value: 1 }, [
      { subscriptionId: 'webhook_1', subject: 'ROOM_OCCUPANCY|room_1', value: '2' },
      { subscriptionId: 'webhook_2', subject: 'ROOM_OCCUPANCY|room_1', value: '5' },
    ]);
    a.enqueue([], undefined, [{ subscriptionId: 'webhook_1', subject: 'ROOM_OCCUPANCY|room_1', value: '3' }]);
    a.close();
    const b = new SqliteWebhookStore(path);
    expect(b.lastValues()).toEqual([
      { subscriptionId: 'webhook_1', subject: 'ROOM_OCCUPANCY|room_1', value: '3' },
      { subscriptionId: 'webhook_2', subject: 'ROOM_OCCUPANCY|room_1', value: '5' },
    ]);
    b.deleteSubscription('webhook_1');
    expect(b.lastValues().map((v) => v.subscriptionId)).toEqual(['webhook_2']);
    b.close();
  });

  it('inserts a large fan-out in order, in statements of many rows, skipping repeats', () => {
    const s = new SqliteWebhookStore(':memory:');
    const many = Array.from({ length: 200 }, (_, i) => delivery(`event_${String(i).padStart(3, '0')}`, i));
    s.enqueue([...many.slice(0, 70), many[5] as DeliveryInsert, ...many.slice(70)]);
    const rows = s.deliveries('webhook_1');
    expect(rows.map((d) => d.eventId)).toEqual(many.map((d) => d.eventId));
    expect(rows.map((d) => d.id)).toEqual(rows.map((_, i) => i + 1));
    s.close();
  });

  it('enqueues an event once per subscription even when fanned out twice', () => {
    const s = new SqliteWebhookStore(':memory:');
    s.enqueue([delivery('event_a', 10)]);
    s.enqueue([delivery('event_a', 10), delivery('event_a', 10, 'webhook_2')]);
    expect(s.deliveries('webhook_1')).toHaveLength(1);
    expect(s.deliveries('webhook_2')).toHaveLength(1);
    s.close();
  });

  it('moves deliveries through retry, delivered and dead, and replays dead letters once', () => {
    const s = new SqliteWebhookStore(':memory:');
    s.enqueue([delivery('event_a', 10), delivery('event_b', 20), delivery('event_c', 30)]);
    const [a, b, c] = s.due('webhook_1', 1000, 10) as [
      NonNullable<ReturnType<typeof s.due>[0]>,
      NonNullable<ReturnType<typeof s.due>[0]>,
      NonNullable<ReturnType<typeof s.due>[0]>,
    ];
    s.recordAttempts([
      { id: a.id, result: 'delivered', atMs: 1100 },
      { id: b.id, result: 'retry', nextAttemptMs: 5000, error: 'HTTP 500' },
      { id: c.id, result: 'dead', error: 'HTTP 404' },
    ]);
    expect(s.due('webhook_1', 4999, 10)).toEqual([]);
    expect(s.nextDueMs(['webhook_1', 'webhook_9'])).toBe(5000);
    expect(s.due('webhook_1', 5000, 10).map((d) => [d.eventId, d.attempts, d.lastError])).toEqual([
      ['event_b', 1, 'HTTP 500'],
    ]);
    expect(s.counts('webhook_1')).toEqual({ pending: 1, delivered: 1, dead: 1 });
    expect(s.deadLetters().map((d) => d.eventId)).toEqual(['event_c']);
    expect(s.replayDead('webhook_1', 6000)).toBe(1);
    expect(s.replayDead('webhook_1', 6000)).toBe(0);
    expect(s.due('webhook_1', 6000, 10).map((d) => [d.eventId, d.attempts])).toEqual([
      ['event_b', 1],
      ['event_c', 0],
    ]);
    expect(s.replayRange(null, 0, 15, 7000)).toBe(1);
    expect(s.counts('webhook_1')).toEqual({ pending: 3, delivered: 0, dead: 0 });
    s.close();
  });

  it('pages due deliveries by (due instant, event time, event id) after a given one', () => {
    const s = new SqliteWebhookStore(':memory:');
    s.enqueue([delivery('event_c', 20), delivery('event_a', 20), delivery('event_b', 10), delivery('event_d', 30)]);
    const first = s.due('webhook_1', 1000, 2);
    expect(first.map((d) => d.eventId)).toEqual(['event_b', 'event_a']);
    expect(s.dueAfter('webhook_1', 1000, first[1] as (typeof first)[number], 10).map((d) => d.eventId)).toEqual([
      'event_c',
      'event_d',
    ]);
    s.close();
  });

  it('drops undelivered rows with their subscription, and hands out increasing sequence numbers', () => {
    const s = new SqliteWebhookStore(':memory:');
    s.putSubscription({ id: 'webhook_1', orgId: 'org_1', body: '{}' });
    s.enqueue([delivery('event_a', 10)]);
    expect(s.deleteSubscription('webhook_1')).toBe(true);
    expect(s.deleteSubscription('webhook_1')).toBe(false);
    expect(s.deliveries('webhook_1')).toEqual([]);
    expect([s.nextSequence('webhook'), s.nextSequence('webhook'), s.nextSequence('other')]).toEqual([1, 2, 1]);
    s.close();
  });

  it('prunes delivered rows of old events only, keeping pending ones and dead letters', () => {
    const s = new SqliteWebhookStore(':memory:');
    s.enqueue([delivery('event_a', 10), delivery('event_b', 20), delivery('event_c', 30), delivery('event_d', 500)]);
    const [a, b] = s.due('webhook_1', 1000, 2);
    const d = s.due('webhook_1', 1000, 10).find((x) => x.eventId === 'event_d');
    s.recordAttempts([
      { id: a?.id ?? 0, result: 'delivered', atMs: 1000 },
      { id: b?.id ?? 0, result: 'dead', error: 'HTTP 410' },
      { id: d?.id ?? 0, result: 'delivered', atMs: 1000 },
    ]);
    expect(s.pruneDelivered(100)).toBe(1);
    expect(s.deliveries('webhook_1').map((x) => [x.eventId, x.state])).toEqual([
      ['event_b', 'dead'],
      ['event_c', 'pending'],
      ['event_d', 'delivered'],
    ]);
    s.close();
  });

  it('marks delivered exactly the ids of the records, whether they form a few runs (ranges) or many (one list), with repeats', () => {
    const SEED = 1213;
    console.log(`fast-check seed ${SEED}`);
    const s = new SqliteWebhookStore(tempDb());
    const n = 40;
    let run = 0;
    try {
      fc.assert(
        fc.property(fc.array(fc.nat({ max: n - 1 }), { maxLength: 50 }), fc.nat({ max: n - 1 }), (picks, retried) => {
          const sub = `webhook_${++run}`;
          s.enqueue(Array.from({ length: n }, (_, i) => delivery(`event_${i}`, i, sub)));
          const ids = s.due(sub, 1000, n).map((d) => d.id);
          const chosen = picks.map((k) => ids[k] as number).filter((id) => id !== ids[retried]);
          s.recordAttempts([
            ...chosen.map((id) => ({ id, result: 'delivered' as const, atMs: 2000 })),
            { id: ids[retried] as number, result: 'retry', nextAttemptMs: 3000, error: 'x' },
          ]);
          const want = new Set(chosen);
          for (const d of s.deliveries(sub)) {
            if (want.has(d.id)) expect([d.state, d.attempts, d.deliveredAtMs]).toEqual(['delivered', 1, 2000]);
            else if (d.id === ids[retried])
              expect([d.state, d.attempts, d.nextAttemptMs]).toEqual(['pending', 1, 3000]);
            else expect([d.state, d.attempts, d.deliveredAtMs]).toEqual(['pending', 0, null]);
          }
        }),
        { seed: SEED, numRuns: 200 },
      );
    } finally {
      s.close();
    }
  });
});
