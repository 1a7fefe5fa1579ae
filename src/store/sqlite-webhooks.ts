import type Database from 'better-sqlite3';
import { prepareOutboxInsert } from './sqlite-outbox.js';
import { openDatabase } from './sqlite-store.js';
import {
  toDelivery,
  type AttemptRecord,
  type Delivery,
  type DeliveryCounts,
  type DeliveryState,
  type DeliveryInsert,
  type DeliveryRow,
  type LastValue,
  type StoredSubscription,
  type WebhookStore,
} from './webhook-port.js';

/**
 * Webhook subscriptions and the delivery outbox in the store's SQLite file (migrations 5–7), on a
 * connection of their own (WAL: the dispatcher writes while ingest writes through its own).
 * A delivery is a row of `webhook_deliveries` and its body a row of `webhook_delivery_bodies`
 * under the same id (sqlite-outbox.ts writes both; a trigger deletes the body with its row).
 */

/** A delivery row with its body, as `DeliveryRow`. */
const WITH_BODY = 'd.*, b.body AS body FROM webhook_deliveries d JOIN webhook_delivery_bodies b ON b.id = d.id';

/**
 * The columns a due delivery needs, not `*`: a pending row's state and delivery instant are
 * known, and its subscription is the one asked for (no strings built per row for them). Read
 * as arrays (`raw`): a row object per row would be built, read once and dropped (~1 µs a row).
 */
const DUE_COLUMNS =
  'd.id, event_id, event_type, event_ts_ms, b.body, enqueued_at_ms, next_attempt_ms, attempts, last_error FROM webhook_deliveries d JOIN webhook_delivery_bodies b ON b.id = d.id';
type DueRow = [
  id: number,
  eventId: string,
  eventType: string,
  eventTsMs: number,
  body: string,
  enqueuedAtMs: number,
  nextAttemptMs: number,
  attempts: number,
  lastError: string | null,
];
const dueDelivery = (subscriptionId: string, r: DueRow): Delivery => ({
  id: r[0],
  subscriptionId,
  eventId: r[1],
  eventType: r[2],
  eventTimestampMs: r[3],
  body: r[4],
  enqueuedAtMs: r[5],
  nextAttemptMs: r[6],
  attempts: r[7],
  state: 'pending',
  lastError: r[8],
  deliveredAtMs: null,
});

function prepare(db: Database.Database) {
  return {
    subscriptions: db.prepare<[], { id: string; org_id: string; body: string }>(
      'SELECT id, org_id, body FROM webhook_subscriptions ORDER BY seq',
    ),
    putSubscription: db.prepare(
      `INSERT INTO webhook_subscriptions (id, org_id, body, seq) VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM webhook_subscriptions))
       ON CONFLICT (id) DO UPDATE SET org_id = excluded.org_id, body = excluded.body`,
    ),
    deleteSubscription: db.prepare('DELETE FROM webhook_subscriptions WHERE id = ?'),
    deleteUndelivered: db.prepare("DELETE FROM webhook_deliveries WHERE subscription_id = ? AND state != 'delivered'"),
    getState: db.prepare<[string], { value: number }>('SELECT value FROM pipeline_state WHERE key = ?'),
    setState: db.prepare(
      'INSERT INTO pipeline_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    insert: prepareOutboxInsert(db),
    deleteLastValues: db.prepare('DELETE FROM webhook_last_values WHERE subscription_id = ?'),
    putLastValue: db.prepare(
      'INSERT INTO webhook_last_values (subscription_id, subject, value) VALUES (?, ?, ?) ON CONFLICT (subscription_id, subject) DO UPDATE SET value = excluded.value',
    ),
    lastValues: db.prepare<[], { subscription_id: string; subject: string; value: string }>(
      'SELECT subscription_id, subject, value FROM webhook_last_values ORDER BY subscription_id, subject',
    ),
    due: db
      .prepare<[string, number, number], DueRow>(
        `SELECT ${DUE_COLUMNS} WHERE subscription_id = ? AND state = 'pending' AND next_attempt_ms <= ? ORDER BY next_attempt_ms, event_ts_ms, event_id LIMIT ?`,
      )
      .raw(true),
    dueAfter: db
      .prepare<[string, number, number, number, string, number], DueRow>(
        `SELECT ${DUE_COLUMNS} WHERE subscription_id = ? AND state = 'pending' AND next_attempt_ms <= ?
         AND (next_attempt_ms, event_ts_ms, event_id) > (?, ?, ?) ORDER BY next_attempt_ms, event_ts_ms, event_id LIMIT ?`,
      )
      .raw(true),
    nextDue: db.prepare<[string], { t: number | null }>(
      "SELECT MIN(next_attempt_ms) AS t FROM webhook_deliveries WHERE subscription_id = ? AND state = 'pending'",
    ),
    // A round's 2xx in one statement: one index update pass instead of one per row.
    deliveredMany: db.prepare(
      "UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, delivered_at_ms = ?, last_error = NULL WHERE id IN (SELECT value FROM json_each(?))",
    ),
    // A run of consecutive ids (a round of deliveries enqueued together): a rowid range, no JSON
    // list to build and parse nor IN-list to sort (~0.2 µs a delivery less than json_each).
    deliveredRange: db.prepare(
      "UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, delivered_at_ms = ?, last_error = NULL WHERE id BETWEEN ? AND ?",
    ),
    retry: db.prepare(
      'UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_ms = ?, last_error = ? WHERE id = ?',
    ),
    dead: db.prepare(
      "UPDATE webhook_deliveries SET state = 'dead', attempts = attempts + 1, last_error = ? WHERE id = ?",
    ),
    deadAll: db.prepare<[], DeliveryRow>(`SELECT ${WITH_BODY} WHERE state = 'dead' ORDER BY d.id`),
    deadOf: db.prepare<[string], DeliveryRow>(
      `SELECT ${WITH_BODY} WHERE state = 'dead' AND subscription_id = ? ORDER BY d.id`,
    ),
    replayDeadAll: db.prepare(
      "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ? WHERE state = 'dead'",
    ),
    replayDeadOf: db.prepare(
      "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ? WHERE state = 'dead' AND subscription_id = ?",
    ),
    // By time within one subscription: the range of the (subscription, event time, event id) index.
    replayRangeOf: db.prepare(
      "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ?, delivered_at_ms = NULL WHERE subscription_id = ? AND event_ts_ms >= ? AND event_ts_ms < ? AND state != 'pending'",
    ),
    // The subscriptions having rows (a deleted one's delivered rows stay), one index seek each.
    subscriptionAfter: db.prepare<[string], { s: string }>(
      'SELECT subscription_id AS s FROM webhook_deliveries WHERE subscription_id > ? ORDER BY subscription_id LIMIT 1',
    ),
    reschedule: db.prepare(
      "UPDATE webhook_deliveries SET next_attempt_ms = ? WHERE subscription_id = ? AND state = 'pending' AND next_attempt_ms > ?",
    ),
    pruneDeliveredOf: db.prepare(
      "DELETE FROM webhook_deliveries WHERE subscription_id = ? AND event_ts_ms < ? AND state = 'delivered'",
    ),
    counts: db.prepare<[string], { state: DeliveryState; n: number }>(
      'SELECT state, COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ? GROUP BY state',
    ),
    deliveries: db.prepare<[string], DeliveryRow>(`SELECT ${WITH_BODY} WHERE subscription_id = ? ORDER BY d.id`),
  };
}

/** Runs of consecutive ids a delivered mark is written as ranges, beyond which one id list is cheaper. */
const MAX_RANGES = 4;

/**
 * Marks `ids` delivered at `atMs`: as at most MAX_RANGES rowid ranges when they form so few runs
 * of consecutive ids (a range holds exactly the ids of its run: rowids are unique), else (or
 * with an id twice: IN counts it once) as one id list. One statement per run or list, not per row.
 */
function markDelivered(q: ReturnType<typeof prepare>, atMs: number, ids: readonly number[]): void {
  const sorted = Float64Array.from(ids).sort();
  let runs = 1;
  for (let i = 1; i < sorted.length && runs <= MAX_RANGES; i++) {
    const step = (sorted[i] as number) - (sorted[i - 1] as number);
    if (step === 0) runs = Infinity;
    else if (step !== 1) runs++;
  }
  if (runs > MAX_RANGES) {
    q.deliveredMany.run(atMs, JSON.stringify(ids));
    return;
  }
  let start = 0;
  for (let i = 1; i <= sorted.length; i++) {
    if (i === sorted.length || (sorted[i] as number) !== (sorted[i - 1] as number) + 1) {
      q.deliveredRange.run(atMs, sorted[start], sorted[i - 1]);
      start = i;
    }
  }
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

  enqueue(
    deliveries: readonly DeliveryInsert[],
    cursor?: { key: string; value: number },
    lastValues?: readonly LastValue[],
  ): void {
    const q = this.#q;
    this.#db.transaction(() => {
      q.insert(deliveries);
      if (cursor) q.setState.run(cursor.key, cursor.value);
      for (const v of lastValues ?? []) q.putLastValue.run(v.subscriptionId, v.subject, v.value);
    })();
  }

  lastValues(): LastValue[] {
    return this.#q.lastValues
      .all()
      .map((r) => ({ subscriptionId: r.subscription_id, subject: r.subject, value: r.value }));
  }

  cursor(key: string): number {
    return this.#q.getState.get(key)?.value ?? 0;
  }

  due(subscriptionId: string, nowMs: number, limit: number): Delivery[] {
    return this.#q.due.all(subscriptionId, nowMs, limit).map((r) => dueDelivery(subscriptionId, r));
  }

  dueAfter(subscriptionId: string, nowMs: number, after: Delivery, limit: number): Delivery[] {
    return this.#q.dueAfter
      .all(subscriptionId, nowMs, after.nextAttemptMs, after.eventTimestampMs, after.eventId, limit)
      .map((r) => dueDelivery(subscriptionId, r));
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
      for (const [atMs, ids] of deliveredAt) markDelivered(q, atMs, ids);
    })();
  }

  deadLetters(subscriptionId?: string): Delivery[] {
    return (subscriptionId === undefined ? this.#q.deadAll.all() : this.#q.deadOf.all(subscriptionId)).map(toDelivery);
  }

  replayDead(subscriptionId: string | null, nowMs: number): number {
    return (
      subscriptionId === null ? this.#q.replayDeadAll.run(nowMs) : this.#q.replayDeadOf.run(nowMs, subscriptionId)
    ).changes;
  }

  replayRange(subscriptionId: string | null, fromMs: number, toMs: number, nowMs: number): number {
    if (subscriptionId !== null) return this.#q.replayRangeOf.run(nowMs, subscriptionId, fromMs, toMs).changes;
    return this.#eachSubscription((id) => this.#q.replayRangeOf.run(nowMs, id, fromMs, toMs).changes);
  }

  reschedule(subscriptionId: string, nowMs: number): number {
    return this.#q.reschedule.run(nowMs, subscriptionId, nowMs).changes;
  }

  pruneDelivered(beforeMs: number): number {
    return this.#eachSubscription((id) => this.#q.pruneDeliveredOf.run(id, beforeMs).changes);
  }

  /** `work` for every subscription having rows, in one transaction; the sum of what it returns. */
  #eachSubscription(work: (subscriptionId: string) => number): number {
    return this.#db.transaction(() => {
      let n = 0;
      for (let row = this.#q.subscriptionAfter.get(''); row; row = this.#q.subscriptionAfter.get(row.s))
        n += work(row.s);
      return n;
    })();
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
