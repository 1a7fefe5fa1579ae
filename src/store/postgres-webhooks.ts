import type { PostgresSession } from './postgres-session.js';
import { PostgresStore } from './postgres-store.js';
import { columnsOf, deliveryColumns, deliveryInsertCtes } from './postgres-writes.js';
import {
  toDelivery,
  type AsyncWebhookStore,
  type AttemptRecord,
  type Delivery,
  type DeliveryCounts,
  type DeliveryState,
  type DeliveryInsert,
  type DeliveryRow,
  type LastValue,
  type StoredSubscription,
} from './webhook-port.js';

/**
 * Webhook subscriptions and the delivery outbox in the PostgreSQL store (tables of
 * postgres-schema.ts), the `WebhookStore` operations made asynchronous (`AsyncWebhookStore`);
 * the webhook engine, its service and `occusim webhooks` await them.
 * Text keys that order deliveries compare byte-wise (COLLATE "C"), as SQLite does, so the
 * delivery order does not depend on the database's locale.
 */

const DUE_ORDER = 'ORDER BY next_attempt_ms, event_ts_ms, event_id COLLATE "C"';
// Data-modifying CTEs run to completion whether or not the statement reads them.
const ENQUEUE_SQL = `WITH ${deliveryInsertCtes(1, '')}\nSELECT 1`;
/** A delivery row with its body, as `DeliveryRow`. */
const WITH_BODY = 'd.*, b.body FROM webhook_deliveries d JOIN webhook_delivery_bodies b ON b.id = d.id';
// One row per (subscription, subject) in a call: the gate records each subject's last value only.
const PUT_LAST_VALUES_SQL = `
INSERT INTO webhook_last_values (subscription_id, subject, value)
SELECT s, k, v FROM unnest($1::text[], $2::text[], $3::text[]) AS x(s, k, v)
ON CONFLICT (subscription_id, subject) DO UPDATE SET value = excluded.value`;
const SET_STATE_SQL =
  'INSERT INTO pipeline_state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value';

export class PostgresWebhookStore implements AsyncWebhookStore {
  readonly #db: PostgresSession;

  private constructor(db: PostgresSession) {
    this.#db = db;
  }

  static async open(url: string): Promise<PostgresWebhookStore> {
    return new PostgresWebhookStore(await PostgresStore.migratedSession(url));
  }

  async subscriptions(): Promise<StoredSubscription[]> {
    const rows = await this.#db.rows<{ id: string; org_id: string; body: string }>(
      'SELECT id, org_id, body FROM webhook_subscriptions ORDER BY seq',
    );
    return rows.map((r) => ({ id: r.id, orgId: r.org_id, body: r.body }));
  }

  async putSubscription(s: StoredSubscription): Promise<void> {
    await this.#db.query(
      `INSERT INTO webhook_subscriptions (id, org_id, body, seq) VALUES ($1, $2, $3, (SELECT COALESCE(MAX(seq), 0) + 1 FROM webhook_subscriptions))
       ON CONFLICT (id) DO UPDATE SET org_id = excluded.org_id, body = excluded.body`,
      [s.id, s.orgId, s.body],
    );
  }

  async deleteSubscription(id: string): Promise<boolean> {
    const r = await this.#db.query(
      `WITH undelivered AS (DELETE FROM webhook_deliveries WHERE subscription_id = $1 AND state != 'delivered'),
            last_values AS (DELETE FROM webhook_last_values WHERE subscription_id = $1)
       DELETE FROM webhook_subscriptions WHERE id = $1`,
      [id],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async nextSequence(name: string): Promise<number> {
    const [r] = await this.#db.rows<{ value: number }>(
      'INSERT INTO pipeline_state (key, value) VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET value = pipeline_state.value + 1 RETURNING value',
      [`seq:${name}`],
    );
    return r?.value ?? 1;
  }

  async enqueue(
    deliveries: readonly DeliveryInsert[],
    cursor?: { key: string; value: number },
    lastValues?: readonly LastValue[],
  ): Promise<void> {
    const statements: Array<[string, unknown[]]> = [];
    if (deliveries.length > 0) {
      statements.push([ENQUEUE_SQL, deliveryColumns(deliveries)]);
    }
    if (cursor) statements.push([SET_STATE_SQL, [cursor.key, cursor.value]]);
    if (lastValues && lastValues.length > 0) {
      statements.push([PUT_LAST_VALUES_SQL, columnsOf(lastValues, ['subscriptionId', 'subject', 'value'])]);
    }
    await this.#db.transaction(statements);
  }

  async lastValues(): Promise<LastValue[]> {
    const rows = await this.#db.rows<{ subscription_id: string; subject: string; value: string }>(
      'SELECT subscription_id, subject, value FROM webhook_last_values ORDER BY subscription_id COLLATE "C", subject COLLATE "C"',
    );
    return rows.map((r) => ({ subscriptionId: r.subscription_id, subject: r.subject, value: r.value }));
  }

  async cursor(key: string): Promise<number> {
    const [r] = await this.#db.rows<{ value: number }>('SELECT value FROM pipeline_state WHERE key = $1', [key]);
    return r?.value ?? 0;
  }

  async due(subscriptionId: string, nowMs: number, limit: number): Promise<Delivery[]> {
    const rows = await this.#db.rows<DeliveryRow>(
      `SELECT ${WITH_BODY} WHERE subscription_id = $1 AND state = 'pending' AND next_attempt_ms <= $2 ${DUE_ORDER} LIMIT $3`,
      [subscriptionId, nowMs, limit],
    );
    return rows.map(toDelivery);
  }

  async dueAfter(subscriptionId: string, nowMs: number, after: Delivery, limit: number): Promise<Delivery[]> {
    const rows = await this.#db.rows<DeliveryRow>(
      `SELECT ${WITH_BODY} WHERE subscription_id = $1 AND state = 'pending' AND next_attempt_ms <= $2
         AND (next_attempt_ms, event_ts_ms, event_id COLLATE "C") > ($3, $4, $5 COLLATE "C") ${DUE_ORDER} LIMIT $6`,
      [subscriptionId, nowMs, after.nextAttemptMs, after.eventTimestampMs, after.eventId, limit],
    );
    return rows.map(toDelivery);
  }

  async nextDueMs(subscriptionIds: readonly string[]): Promise<number | null> {
    if (subscriptionIds.length === 0) return null;
    const [r] = await this.#db.rows<{ t: number | null }>(
      "SELECT MIN(next_attempt_ms) AS t FROM webhook_deliveries WHERE subscription_id = ANY($1::text[]) AND state = 'pending'",
      [[...subscriptionIds]],
    );
    return r?.t ?? null;
  }

  async recordAttempts(records: readonly AttemptRecord[]): Promise<void> {
    const statements: Array<[string, unknown[]]> = [];
    const deliveredAt = new Map<number, number[]>();
    for (const r of records) {
      if (r.result === 'delivered') {
        const ids = deliveredAt.get(r.atMs);
        if (ids) ids.push(r.id);
        else deliveredAt.set(r.atMs, [r.id]);
      } else if (r.result === 'retry')
        statements.push([
          'UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_ms = $1, last_error = $2 WHERE id = $3',
          [r.nextAttemptMs, r.error, r.id],
        ]);
      else
        statements.push([
          "UPDATE webhook_deliveries SET state = 'dead', attempts = attempts + 1, last_error = $1 WHERE id = $2",
          [r.error, r.id],
        ]);
    }
    for (const [atMs, ids] of deliveredAt) {
      statements.push([
        "UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, delivered_at_ms = $1, last_error = NULL WHERE id = ANY($2::bigint[])",
        [atMs, ids],
      ]);
    }
    await this.#db.transaction(statements);
  }

  async deadLetters(subscriptionId?: string): Promise<Delivery[]> {
    const rows =
      subscriptionId === undefined
        ? await this.#db.rows<DeliveryRow>(`SELECT ${WITH_BODY} WHERE state = 'dead' ORDER BY d.id`)
        : await this.#db.rows<DeliveryRow>(
            `SELECT ${WITH_BODY} WHERE state = 'dead' AND subscription_id = $1 ORDER BY d.id`,
            [subscriptionId],
          );
    return rows.map(toDelivery);
  }

  async replayDead(subscriptionId: string | null, nowMs: number): Promise<number> {
    const r = await this.#db.query(
      "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = $1 WHERE state = 'dead' AND ($2::text IS NULL OR subscription_id = $2)",
      [nowMs, subscriptionId],
    );
    return r.rowCount ?? 0;
  }

  async replayRange(subscriptionId: string | null, fromMs: number, toMs: number, nowMs: number): Promise<number> {
    const r = await this.#db.query(
      `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = $1, delivered_at_ms = NULL
       WHERE state != 'pending' AND event_ts_ms >= $2 AND event_ts_ms < $3 AND ($4::text IS NULL OR subscription_id = $4)`,
      [nowMs, fromMs, toMs, subscriptionId],
    );
    return r.rowCount ?? 0;
  }

  async reschedule(subscriptionId: string, nowMs: number): Promise<number> {
    const r = await this.#db.query(
      "UPDATE webhook_deliveries SET next_attempt_ms = $1 WHERE subscription_id = $2 AND state = 'pending' AND next_attempt_ms > $1",
      [nowMs, subscriptionId],
    );
    return r.rowCount ?? 0;
  }

  async pruneDelivered(beforeMs: number): Promise<number> {
    const r = await this.#db.query("DELETE FROM webhook_deliveries WHERE state = 'delivered' AND event_ts_ms < $1", [
      beforeMs,
    ]);
    return r.rowCount ?? 0;
  }

  async counts(subscriptionId: string): Promise<DeliveryCounts> {
    const c: DeliveryCounts = { pending: 0, delivered: 0, dead: 0 };
    for (const r of await this.#db.rows<{ state: DeliveryState; n: number }>(
      'SELECT state, COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = $1 GROUP BY state',
      [subscriptionId],
    ))
      c[r.state] = r.n;
    return c;
  }

  async deliveries(subscriptionId: string): Promise<Delivery[]> {
    return (
      await this.#db.rows<DeliveryRow>(`SELECT ${WITH_BODY} WHERE subscription_id = $1 ORDER BY d.id`, [subscriptionId])
    ).map(toDelivery);
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
