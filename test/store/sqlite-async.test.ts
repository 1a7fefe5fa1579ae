import { describe, expect, it } from 'vitest';
import { sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import type { WebhookStore } from '../../src/store/webhook-port.js';

/** The SQLite webhook adapter behind the asynchronous port, as the webhook engine awaits it. */
const OPERATIONS = Object.keys({
  subscriptions: 0,
  putSubscription: 0,
  deleteSubscription: 0,
  nextSequence: 0,
  enqueue: 0,
  lastValues: 0,
  cursor: 0,
  due: 0,
  dueAfter: 0,
  nextDueMs: 0,
  recordAttempts: 0,
  deadLetters: 0,
  replayDead: 0,
  replayRange: 0,
  reschedule: 0,
  counts: 0,
  pruneDelivered: 0,
  deliveries: 0,
  close: 0,
} satisfies Record<keyof WebhookStore, 0>);

describe('sqliteWebhookStore', () => {
  it('lifts every operation of the port, answering with the adapter’s values in settled promises', async () => {
    const sync = new SqliteWebhookStore(':memory:');
    const port = sqliteWebhookStore(sync);
    for (const name of OPERATIONS) expect(typeof port[name as keyof typeof port], name).toBe('function');
    await port.enqueue([
      {
        subscriptionId: 'webhook_1',
        eventId: 'event_a',
        eventType: 'TRAFFIC',
        eventTimestampMs: 1,
        body: '{}',
        enqueuedAtMs: 1,
        nextAttemptMs: 1,
      },
    ]);
    expect(await port.due('webhook_1', 1, 10)).toEqual(sync.due('webhook_1', 1, 10));
    expect(await port.counts('webhook_1')).toEqual({ pending: 1, delivered: 0, dead: 0 });
    // One wrapper per operation, built once: the same function on every read.
    expect(port.due).toBe(port.due);
    await port.close();
  });

  it('rejects (never throws) when the adapter fails', async () => {
    const port = sqliteWebhookStore(':memory:');
    await port.close();
    let thrown: unknown = null;
    let answer: Promise<unknown> | null = null;
    try {
      answer = port.counts('webhook_1');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeNull();
    await expect(answer).rejects.toThrow();
  });
});
