import type Database from 'better-sqlite3';
import { openDatabase } from './sqlite-store.js';
import { toDelivery, type AttemptRecord, type Delivery, type DeliveryCounts, type DeliveryState, type DeliveryInsert, type DeliveryRow, type LastValue, type StoredSubscription, type WebhookStore } from './webhook-port.js';

/**
 * Webhook subscriptions and the delivery outbox in the store's SQLite file (migration 5), on a
 * connection of their own (WAL: the dispatcher writes while ingest writes through its own).
 */

const INSERT_ROWS = 64;

/** Inserts `rows` deliveries in order; only a repeat of (subscription, event) is skipped (OR IGNORE would also drop a row breaking NOT NULL). */
function insertSql(rows: number): string {
  const values = Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?, 0, 'pending')").join(', ');
  return `INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, event_ts_ms, body, enqueued_at_ms, next_attempt_ms, attempts, state)
    VALUES ${values} ON CONFLICT (subscription_id, event_id) DO NOTHING`;
}

/** The bind parameters of `rows` deliveries from `start`, in insertSql's order, into `into` (reused: no array per row). */
function insertParams(deliveries: readonly DeliveryInsert[], start: number, rows: number, into: unknown[]): unknown[] {
  into.length = rows * 7;
  for (let k = 0; k < rows; k++) {
    const d = deliveries[start + k] as DeliveryInsert;
    const j = k * 7;
    into[j] = d.subscriptionId;
    into[j + 1] = d.eventId;
    into[j + 2] = d.eventType;
    into[j + 3] = d.eventTimestampMs;
    into[j + 4] = d.body;
    into[j + 5] = d.enqueuedAtMs;
    into[j + 6] = d.nextAttemptMs;
  }
  return into;
}

/**
 * The columns a due delivery needs, not `*`: a pending row's state and delivery instant are
 * known, and its subscription is the one asked for (no strings built per row for them).
 */
const DUE_COLUMNS = 'id, event_id, event_type, event_ts_ms, body, enqueued_at_ms, next_attempt_ms, attempts, last_error';
type DueRow = Pick<DeliveryRow, 'id' | 'event_id' | 'event_type' | 'event_ts_ms' | 'body' | 'enqueued_at_ms' | 'next_attempt_ms' | 'attempts' | 'last_error'>;
const dueDelivery = (subscriptionId: string, r: DueRow): Delivery => ({
  id: r.id,
  subscriptionId,
  eventId: r.event_id,
  eventType: r.event_type,
  eventTimestampMs: r.event_ts_ms,
  body: r.body,
  enqueuedAtMs: r.enqueued_at_ms,
  nextAttemptMs: r.next_attempt_ms,
  attempts: r.attempts,
  state: 'pending',
  lastError: r.last_error,
  deliveredAtMs: null,
});

function prepare(db: Database.Database) {
  return {
    subscriptions: db.prepare<[], { id: string; org_id: string; body: string }>('SELECT id, org_id, body FROM webhook_subscriptions ORDER BY seq'),
    putSubscription: db.prepare(
      `INSERT INTO webhook_subscriptions (id, org_id, body, seq) VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM webhook_subscriptions))
       ON CONFLICT (id) DO UPDATE SET org_id = excluded.org_id, body = excluded.body`,
    ),
    deleteSubscription: db.prepare('DELETE FROM webhook_subscriptions WHERE id = ?'),
    deleteUndelivered: db.prepare("DELETE FROM webhook_deliveries WHERE subscription_id = ? AND state != 'delivered'"),
    getState: db.prepare<[string], { value: number }>('SELECT value FROM pipeline_state WHERE key = ?'),
    setState: db.prepare('INSERT INTO pipeline_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    insert: db.prepare(insertSql(1)),
    // Rows of a fan-out in statements of INSERT_ROWS: one statement's bind and step per 64 rows, not per row.
    insertMany: db.prepare(insertSql(INSERT_ROWS)),
    deleteLastValues: db.prepare('DELETE FROM webhook_last_values WHERE subscription_id = ?'),
    putLastValue: db.prepare(
      'INSERT INTO webhook_last_values (subscription_id, subject, value) VALUES (?, ?, ?) ON CONFLICT (subscription_id, subject) DO UPDATE SET value = excluded.value',
    ),
    lastValues: db.prepare<[], { subscription_id: string; subject: string; value: string }>('SELECT subscription_id, subject, value FROM webhook_last_values ORDER BY subscription_id, subject'),
    due: db.prepare<[string, number, number], DueRow>(
      `SELECT ${DUE_COLUMNS} FROM webhook_deliveries WHERE subscription_id = ? AND state = 'pending' AND next_attempt_ms <= ? ORDER BY next_attempt_ms, event_ts_ms, event_id LIMIT ?`,
    ),
    dueAfter: db.prepare<[string, number, number, number, string, number], DueRow>(
      `SELECT ${DUE_COLUMNS} FROM webhook_deliveries WHERE subscription_id = ? AND state = 'pending' AND next_attempt_ms <= ?
         AND (next_attempt_ms, event_ts_ms, event_id) > (?, ?, ?) ORDER BY next_attempt_ms, event_ts_ms, event_id LIMIT ?`,
    ),
    nextDue: db.prepare<[string], { t: number | null }>("SELECT MIN(next_attempt_ms) AS t FROM webhook_deliveries WHERE subscription_id = ? AND state = 'pending'"),
    // A round's 2xx in one statement: one index update pass instead of one per row.
    deliveredMany: db.prepare("UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, delivered_at_ms = ?, last_error = NULL WHERE id IN (SELECT value FROM json_each(?))"),
    retry: db.prepare('UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_ms = ?, last_error = ? WHERE id = ?'),
    dead: db.prepare("UPDATE webhook_deliveries SET state = 'dead', attempts = attempts + 1, last_error = ? WHERE id = ?"),
    deadAll: db.prepare<[], DeliveryRow>("SELECT * FROM webhook_deliveries WHERE state = 'dead' ORDER BY id"),
    deadOf: db.prepare<[string], DeliveryRow>("SELECT * FROM webhook_deliveries WHERE state = 'dead' AND subscription_id = ? ORDER BY id"),
    replayDeadAll: db.prepare("UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ? WHERE state = 'dead'"),
    replayDeadOf: db.prepare("UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ? WHERE state = 'dead' AND subscription_id = ?"),
    replayRangeAll: db.prepare(
      "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ?, delivered_at_ms = NULL WHERE state != 'pending' AND event_ts_ms >= ? AND event_ts_ms < ?",
    ),
    replayRangeOf: db.prepare(
      "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ?, delivered_at_ms = NULL WHERE state != 'pending' AND event_ts_ms >= ? AND event_ts_ms < ? AND subscription_id = ?",
    ),
    reschedule: db.prepare("UPDATE webhook_deliveries SET next_attempt_ms = ? WHERE subscription_id = ? AND state = 'pending' AND next_attempt_ms > ?"),
    pruneDelivered: db.prepare("DELETE FROM webhook_deliveries WHERE state = 'delivered' AND event_ts_ms < ?"),
    counts: db.prepare<[string], { state: DeliveryState; n: number }>('SELECT state, COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ? GROUP BY state'),
    deliveries: db.prepare<[string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE subscription_id = ? ORDER BY id'),
  };
}

export class SqliteWebhookStore implements WebhookStore {
  readonly #db: Database.Database;
  readonly #q: ReturnType<typeof prepare>;

  /** Opens (creating and migrating when needed) the store at `path`. */
  constructor(path: string) {
    this.#db = openDatabase(path);
    this.#q = prepare(this.#db);
  }

  subscriptions(): StoredSubscription[] {
    return this.#q.subscriptions.all().map((r) => ({ id: r.id, orgId: r.org_id, body: r.body }));
  }

  putSubscription(s: StoredSubscription): void {
    this.#q.putSubscription.run(s.id, s.orgId, s.body);
  }

  deleteSubscription(id: string): boolean {
    return this.#db.transaction(() => {
      this.#q.deleteUndelivered.run(id);
      this.#q.deleteLastValues.run(id);
      return this.#q.deleteSubscription.run(id).changes > 0;
    })();
  }

  nextSequence(name: string): number {
    return this.#db.transaction(() => {
      const key = `seq:${name}`;
      const n = (this.#q.getState.get(key)?.value ?? 0) + 1;
      this.#q.setState.run(key, n);
      return n;
    })();
  }

  enqueue(deliveries: readonly DeliveryInsert[], cursor?: { key: string; value: number }, lastValues?: readonly LastValue[]): void {
    const q = this.#q;
    this.#db.transaction(() => {
      const params: unknown[] = [];
      let i = 0;
      for (; i + INSERT_ROWS <= deliveries.length; i += INSERT_ROWS) q.insertMany.run(insertParams(deliveries, i, INSERT_ROWS, params));
      for (; i < deliveries.length; i++) q.insert.run(insertParams(deliveries, i, 1, params));
      if (cursor) q.setState.run(cursor.key, cursor.value);
      for (const v of lastValues ?? []) q.putLastValue.run(v.subscriptionId, v.subject, v.value);
    })();
  }

  lastValues(): LastValue[] {
    return this.#q.lastValues.all().map((r) => ({ subscriptionId: r.subscription_id, subject: r.subject, value: r.value }));
  }

  cursor(key: string): number {
    return this.#q.getState.get(key)?.value ?? 0;
  }

  due(subscriptionId: string, nowMs: number, limit: number): Delivery[] {
    return this.#q.due.all(subscriptionId, nowMs, limit).map((r) => dueDelivery(subscriptionId, r));
  }

  dueAfter(subscriptionId: string, nowMs: number, after: Delivery, limit: number): Delivery[] {
    return this.#q.dueAfter.all(subscriptionId, nowMs, after.nextAttemptMs, after.eventTimestampMs, after.eventId, limit).map((r) => dueDelivery(subscriptionId, r));
  }

  nextDueMs(subscriptionIds: readonly string[]): number | null {
    let min: number | null = null;
    for (const id of subscriptionIds) {
      const t = this.#q.nextDue.get(id)?.t ?? null;
      if (t !== null && (min === null || t < min)) min = t;
    }
    return min;
  }

  recordAttempts(records: readonly AttemptRecord[]): void {
    const q = this.#q;
    this.#db.transaction(() => {
      const deliveredAt = new Map<number, number[]>();
      for (const r of records) {
        if (r.result === 'delivered') {
          const ids = deliveredAt.get(r.atMs);
          if (ids) ids.push(r.id);
          else deliveredAt.set(r.atMs, [r.id]);
        } else if (r.result === 'retry') q.retry.run(r.nextAttemptMs, r.error, r.id);
        else q.dead.run(r.error, r.id);
      }
      for (const [atMs, ids] of deliveredAt) q.deliveredMany.run(atMs, JSON.stringify(ids));
    })();
  }

  deadLetters(subscriptionId?: string): Delivery[] {
    return (subscriptionId === undefined ? this.#q.deadAll.all() : this.#q.deadOf.all(subscriptionId)).map(toDelivery);
  }

  replayDead(subscriptionId: string | null, nowMs: number): number {
    return (subscriptionId === null ? this.#q.replayDeadAll.run(nowMs) : this.#q.replayDeadOf.run(nowMs, subscriptionId)).changes;
  }

  replayRange(subscriptionId: string | null, fromMs: number, toMs: number, nowMs: number): number {
    return (subscriptionId === null ? this.#q.replayRangeAll.run(nowMs, fromMs, toMs) : this.#q.replayRangeOf.run(nowMs, fromMs, toMs, subscriptionId)).changes;
  }

  reschedule(subscriptionId: string, nowMs: number): number {
    return this.#q.reschedule.run(nowMs, subscriptionId, nowMs).changes;
  }

  pruneDelivered(beforeMs: number): number {
    return this.#q.pruneDelivered.run(beforeMs).changes;
  }

  counts(subscriptionId: string): DeliveryCounts {
    const c: DeliveryCounts = { pending: 0, delivered: 0, dead: 0 };
    for (const r of this.#q.counts.all(subscriptionId)) c[r.state] = r.n;
    return c;
  }

  deliveries(subscriptionId: string): Delivery[] {
    return this.#q.deliveries.all(subscriptionId).map(toDelivery);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
