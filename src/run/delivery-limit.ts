import { round } from '../core/stats.js';

/**
 * What limits webhook delivery when it does not keep up (issue 29 item 4): the sender's CPU,
 * the store, or the receiver. Decided from what the engine measured while at least one lane
 * was delivering (webhooks/engine.ts `DeliveryLoad`), wall figures of the run (perf):
 *
 * - the delivering thread's event loop busy share over that time: near 1 means the thread that
 *   signs, sends, reads answers and records (with the ingest beside it when the platform runs
 *   there) had no time to spare — it is the limit, and the store's share of its busy time says
 *   whether that CPU went to the store (SQLite's calls are synchronous: their time is the
 *   thread's) or to the rest (signing, HTTP, parsing);
 * - below that, the thread waited, for the store or for the endpoint's answers. The store's time
 *   beyond the thread's active time cannot have been spent on the thread: it is time waited for
 *   the store (PostgreSQL round trips); when that is at least half the waiting, the store is the
 *   limit. Otherwise the receiver, whose written → answered time is given (its CPU or its own
 *   work; on one machine it shares the cores with the sender and whatever else runs there) —
 *   unless its answers cannot explain the rate: with `inFlight` requests pipelined and answers in
 *   p50 ms, it could carry inFlight ÷ p50 deliveries a second; at twice the measured rate or
 *   more, the wait is the sender's own (between rounds, or for a core), and the sender is named.
 *
 * Measured, not modelled: `test/run/delivery-limit.test.ts` gives the rule measured inputs.
 */
export type DeliveryLimitKind = 'sender-cpu' | 'store' | 'receiver' | 'unmeasured';

export interface DeliveryLoadInput {
  /** Wall ms during which at least one lane was delivering. */
  busyWallMs: number;
  /** Event-loop active ms of the delivering thread within it (null: not measured). */
  loopActiveMs: number | null;
  /** Wall ms in the store's calls on the delivery path. */
  storeMs: number;
  delivered: number;
  responseP50Ms: number;
  responseP99Ms: number;
  /** Requests in flight per endpoint (the pipelining depth). */
  inFlight: number;
}

export interface DeliveryLimit {
  kind: DeliveryLimitKind;
  /** Share of the busy time the delivering thread's event loop was active, 0..1 (null: not measured). */
  senderBusy: number | null;
  /** Share of the busy time spent in the store's calls, 0..1. */
  storeShare: number;
  /** Share of the sending thread's active time spent in the store's calls, 0..1 (null: not measured). */
  storeOfActive: number | null;
  /** Wall µs per delivery: the thread's active time, and the store's part. */
  activeUsPerDelivery: number | null;
  storeUsPerDelivery: number;
  responseP50Ms: number;
  responseP99Ms: number;
  /** One sentence for the summary. */
  statement: string;
}

/** Above this busy share the delivering thread had no time to spare: its CPU is the limit. */
export const SENDER_SATURATED = 0.85;
/** The store is the limit when its calls take at least this share of the time that limits. */
const STORE_DOMINANT = 0.5;

export function deliveryLimit(m: DeliveryLoadInput): DeliveryLimit | null {
  if (m.busyWallMs <= 0 || m.delivered <= 0) return null;
  const storeShare = Math.min(1, m.storeMs / m.busyWallMs);
  const senderBusy = m.loopActiveMs === null ? null : Math.min(1, m.loopActiveMs / m.busyWallMs);
  const per = (ms: number): number => round((ms * 1000) / m.delivered, 1);
  const storeOfActive =
    m.loopActiveMs === null ? null : m.loopActiveMs > 0 ? Math.min(1, m.storeMs / m.loopActiveMs) : 0;
  const figures = {
    senderBusy: senderBusy === null ? null : round(senderBusy, 3),
    storeShare: round(storeShare, 3),
    storeOfActive: storeOfActive === null ? null : round(storeOfActive, 3),
    activeUsPerDelivery: m.loopActiveMs === null ? null : per(m.loopActiveMs),
    storeUsPerDelivery: per(m.storeMs),
    responseP50Ms: m.responseP50Ms,
    responseP99Ms: m.responseP99Ms,
  };
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  const answers = `the endpoint answered in p50 ${m.responseP50Ms} ms, p99 ${m.responseP99Ms} ms`;
  if (senderBusy === null)
    return {
      kind: 'unmeasured',
      ...figures,
      statement: `the sending thread's load was not measured; store ${pct(storeShare)} of the delivery time, ${answers}`,
    };
  const store = `the store ${figures.storeUsPerDelivery} µs per delivery (${pct(storeOfActive ?? 0)} of the thread's busy time)`;
  if (senderBusy >= SENDER_SATURATED) {
    // The thread is saturated: by the store's calls when they took most of its busy time.
    const kind = (storeOfActive ?? 0) >= STORE_DOMINANT ? 'store' : 'sender-cpu';
    return {
      kind,
      ...figures,
      statement:
        `limited by ${kind === 'store' ? "the store's work on the sending thread" : "the sender's CPU"}: ` +
        `the sending thread was busy ${pct(senderBusy)} of the delivery time, ${figures.activeUsPerDelivery} µs per delivery, of which ${store}; ${answers}`,
    };
  }
  // Not saturated: it waited. Store time beyond the thread's active time was waited for off the thread.
  const idleMs = m.busyWallMs - (m.loopActiveMs ?? 0);
  const storeWaitMs = Math.max(0, m.storeMs - (m.loopActiveMs ?? 0));
  const kind = idleMs > 0 && storeWaitMs >= STORE_DOMINANT * idleMs ? 'store' : 'receiver';
  const rate = (m.delivered * 1000) / m.busyWallMs;
  const answerRate = m.responseP50Ms > 0 ? (m.inFlight * 1000) / m.responseP50Ms : Infinity;
  if (kind === 'receiver' && answerRate >= 2 * rate)
    return {
      kind: 'sender-cpu',
      ...figures,
      statement:
        `limited by the sender: its thread was busy ${pct(senderBusy)} of the delivery time, ${figures.activeUsPerDelivery} µs per delivery, of which ${store}; ` +
        `not by the receiver — ${answers}, so ${m.inFlight} in flight carry ${Number.isFinite(answerRate) ? `${Math.round(answerRate).toLocaleString('en-US')}/s` : 'any rate'}, ${Math.round(rate).toLocaleString('en-US')}/s measured`,
    };
  return {
    kind,
    ...figures,
    statement:
      kind === 'store'
        ? `limited by the store: the sending thread was busy ${pct(senderBusy)} of the delivery time and waited for the store's answers, ${figures.storeUsPerDelivery} µs per delivery (${pct(storeShare)} of the delivery time); ${answers}`
        : `limited by the receiver: the sending thread was busy ${pct(senderBusy)} of the delivery time and waited for answers — ${answers} (its CPU or its own work); ${store}`,
  };
}
