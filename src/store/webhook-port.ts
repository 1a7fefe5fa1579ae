/**
 * What webhook delivery needs from storage: subscriptions (survive a restart) and a durable
 * delivery outbox with dead letters. A port of its own beside `Store`, so the pipeline's port
 * does not grow; `SqliteWebhookStore` keeps both in the same SQLite file, and the fan-out from
 * the event outbox advances its cursor in the transaction that enqueues the deliveries.
 */
export interface StoredSubscription {
  id: string;
  orgId: string;
  /** The subscription as the webhook module models it, JSON (this layer does not read it). */
  body: string;
}

export type DeliveryState = 'pending' | 'delivered' | 'dead';

export interface DeliveryInsert {
  subscriptionId: string;
  /** The envelope's `id` (`event_<hash>`): also the `webhook-id` header. */
  eventId: string;
  eventType: string;
  /** The envelope's timestamp (sensing instant), ms. */
  eventTimestampMs: number;
  /** The request body as sent, byte for byte on every attempt. */
  body: string;
  enqueuedAtMs: number;
  nextAttemptMs: number;
}

export interface Delivery extends DeliveryInsert {
  id: number;
  attempts: number;
  state: DeliveryState;
  lastError: string | null;
  deliveredAtMs: number | null;
}

/** The outcome of one attempt, written with the others of a round in one transaction. */
export type AttemptRecord =
  | { id: number; result: 'delivered'; atMs: number }
  | { id: number; result: 'retry'; nextAttemptMs: number; error: string }
  | { id: number; result: 'dead'; error: string };

/** `send_on_value_change`: the last value sent to a subscription about one subject (`type|space or sensor`), JSON of the event's data. */
export interface LastValue {
  subscriptionId: string;
  subject: string;
  value: string;
}

export interface DeliveryCounts {
  pending: number;
  delivered: number;
  dead: number;
}

export interface WebhookStore {
  subscriptions(): StoredSubscription[];
  /** Inserts or replaces. */
  putSubscription(s: StoredSubscription): void;
  /** Deletes it, its undelivered rows (the user asked to drop them) and its last values; false when unknown. */
  deleteSubscription(id: string): boolean;
  /** A number never handed out before in this store (subscription ids). */
  nextSequence(name: string): number;
  /**
   * Appends deliveries (one per subscription and event; a repeat is ignored) and, when given,
   * moves the fan-out cursor and records the `send_on_value_change` values sent, in one
   * transaction: an event is enqueued exactly once.
   */
  enqueue(
    deliveries: readonly DeliveryInsert[],
    cursor?: { key: string; value: number },
    lastValues?: readonly LastValue[],
  ): void;
  /** Every recorded `send_on_value_change` value (the gate's state after a restart). */
  lastValues(): LastValue[];
  cursor(key: string): number;
  /**
   * Pending deliveries of one subscription due at `nowMs`, by (next attempt, event timestamp,
   * event id): an order that does not depend on which hive's batch reached the broker first.
   */
  due(subscriptionId: string, nowMs: number, limit: number): Delivery[];
  /** The same, after `after` in that order (keyset: the rows of earlier rounds are not read again). */
  dueAfter(subscriptionId: string, nowMs: number, after: Delivery, limit: number): Delivery[];
  /** The earliest next attempt of a pending delivery of an enabled subscription among `ids`, or null. */
  nextDueMs(subscriptionIds: readonly string[]): number | null;
  /** Records a round's attempts in one transaction. */
  recordAttempts(records: readonly AttemptRecord[]): void;
  /** Dead letters, oldest first; of one subscription when given. */
  deadLetters(subscriptionId?: string): Delivery[];
  /** Dead letters back to pending, due at `nowMs`, attempts reset; returns how many. */
  replayDead(subscriptionId: string | null, nowMs: number): number;
  /** Delivered or dead deliveries of events sensed in [fromMs, toMs) back to pending; returns how many. */
  replayRange(subscriptionId: string | null, fromMs: number, toMs: number, nowMs: number): number;
  /** Pending deliveries of a subscription waiting past `nowMs` become due at `nowMs` (an endpoint re-enabled); returns how many. */
  reschedule(subscriptionId: string, nowMs: number): number;
  counts(subscriptionId: string): DeliveryCounts;
  /** Deletes delivered rows of events sensed before `beforeMs` (pending and dead ones stay); returns how many. */
  pruneDelivered(beforeMs: number): number;
  /** Every delivery of a subscription in id order (tests, the replay command's listing). */
  deliveries(subscriptionId: string): Delivery[];
  close(): void;
}

/**
 * The port's operations, asynchronous: what the webhook engine, its service and the commands
 * on any store (`occusim webhooks replay|deadletters`) await; adapters `PostgresWebhookStore`
 * and `sqliteWebhookStore` (sqlite-async.ts, over the synchronous `SqliteWebhookStore`).
 */
export type AsyncWebhookStore = {
  [K in keyof WebhookStore]: WebhookStore[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/** A row of `webhook_deliveries`, as both SQL adapters select it (`SELECT *`). */
export interface DeliveryRow {
  id: number;
  subscription_id: string;
  event_id: string;
  event_type: string;
  event_ts_ms: number;
  body: string;
  enqueued_at_ms: number;
  next_attempt_ms: number;
  attempts: number;
  state: DeliveryState;
  last_error: string | null;
  delivered_at_ms: number | null;
}

/** A delivery row as the port's Delivery (the SQLite and PostgreSQL adapters share it). */
export const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  eventId: r.event_id,
  eventType: r.event_type,
  eventTimestampMs: r.event_ts_ms,
  body: r.body,
  enqueuedAtMs: r.enqueued_at_ms,
  nextAttemptMs: r.next_attempt_ms,
  attempts: r.attempts,
  state: r.state,
  lastError: r.last_error,
  deliveredAtMs: r.delivered_at_ms,
});
