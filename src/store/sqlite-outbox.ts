import type Database from 'better-sqlite3';
import type { DeliveryInsert } from './webhook-port.js';

/**
 * The delivery outbox's insert in SQLite (migration 7's layout), shared by the two writers of
 * the outbox: the webhook store's fan-out of occupancy events and the pipeline store's batch
 * transaction (DETECTIONS, TRAFFIC). Each delivery is a small row in `webhook_deliveries` and
 * its body a row of `webhook_delivery_bodies` under the same id: the body is written once and
 * never again, while the delivery row is rewritten by every outcome.
 *
 * Rows go in statements of 64, 32, … 1 rows (one bind and step per statement, not per row).
 * A statement that inserts all its rows (no repeat) assigned them consecutive ids ending at
 * `lastInsertRowid` — rowids of INTEGER PRIMARY KEY are max + 1 and the transaction holds the
 * write lock — so the bodies take those ids without reading anything back. A statement that
 * skipped a repeat of (subscription, event) looks its rows' ids up and leaves the repeated
 * one's stored body as it is (a repeat is ignored, body included).
 */

const SIZES = [64, 32, 16, 8, 4, 2, 1] as const;
const COLUMNS = 6;

/** Only a repeat of (subscription, event) is skipped (OR IGNORE would also drop a row breaking NOT NULL). */
function deliveriesSql(rows: number): string {
  const values = Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, 0, 'pending')").join(', ');
  return `INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, event_ts_ms, enqueued_at_ms, next_attempt_ms, attempts, state)
    VALUES ${values} ON CONFLICT (subscription_id, event_ts_ms, event_id) DO NOTHING`;
}

const bodiesSql = (rows: number): string =>
  `INSERT INTO webhook_delivery_bodies (id, body) VALUES ${Array.from({ length: rows }, () => '(?, ?)').join(', ')}`;

export type OutboxInsert = (deliveries: readonly DeliveryInsert[]) => void;

/** The outbox insert on `db`'s connection; call it inside a write transaction. */
export function prepareOutboxInsert(db: Database.Database): OutboxInsert {
  const deliveries = new Map(SIZES.map((n) => [n, db.prepare(deliveriesSql(n))] as const));
  const bodies = new Map(SIZES.map((n) => [n, db.prepare(bodiesSql(n))] as const));
  const idOf = db.prepare<[string, number, string], { id: number }>(
    'SELECT id FROM webhook_deliveries WHERE subscription_id = ? AND event_ts_ms = ? AND event_id = ?',
  );
  const bodyOnce = db.prepare(
    'INSERT INTO webhook_delivery_bodies (id, body) VALUES (?, ?) ON CONFLICT (id) DO NOTHING',
  );
  // Bind parameters filled into reused arrays: no array per row.
  const params: unknown[] = [];
  const bodyParams: unknown[] = [];
  return (ds) => {
    let i = 0;
    for (const size of SIZES) {
      const insert = deliveries.get(size) as Database.Statement;
      for (; i + size <= ds.length; i += size) {
        params.length = size * COLUMNS;
        for (let k = 0; k < size; k++) {
          const d = ds[i + k] as DeliveryInsert;
          const j = k * COLUMNS;
          params[j] = d.subscriptionId;
          params[j + 1] = d.eventId;
          params[j + 2] = d.eventType;
          params[j + 3] = d.eventTimestampMs;
          params[j + 4] = d.enqueuedAtMs;
          params[j + 5] = d.nextAttemptMs;
        }
        const info = insert.run(params);
        if (info.changes === size) {
          const first = Number(info.lastInsertRowid) - size + 1;
          bodyParams.length = size * 2;
          for (let k = 0; k < size; k++) {
            bodyParams[k * 2] = first + k;
            bodyParams[k * 2 + 1] = (ds[i + k] as DeliveryInsert).body;
          }
          (bodies.get(size) as Database.Statement).run(bodyParams);
        } else {
          for (let k = 0; k < size; k++) {
            const d = ds[i + k] as DeliveryInsert;
            const row = idOf.get(d.subscriptionId, d.eventTimestampMs, d.eventId);
            if (row) bodyOnce.run(row.id, d.body);
          }
        }
      }
    }
  };
}
