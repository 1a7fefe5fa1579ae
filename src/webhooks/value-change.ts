import type { EventEnvelope } from '../cloud/events.js';
import { eventTypeRow } from '../core/event-types.js';
import type { LastValue } from '../store/webhook-port.js';

/**
 * `send_on_value_change` (spec §6 rule 4): a subscription with it receives an event only when
 * the value differs from the last one it was sent for the same subject — the space (occupancy)
 * or the sensor (DETECTIONS, TRAFFIC) — and type. A minute's first value is compared with the
 * last value sent. A `_1M` revision (spec §6 rules 1–2: every minute's recompute sends the
 * minutes of its window again, changed or not) is compared with the value this subscription
 * last had for that same minute: sent when it changed, suppressed when it is a repeat. A
 * revision of a minute the gate has no value for (a restart in between) is sent: at most a
 * duplicate value, never a lost change. Those per-minute values are kept in memory for the
 * look-back window only (`MINUTE_MEMORY_MS`).
 *
 * The last values are kept in the store (`webhook_last_values`): the engine loads them at
 * start (`load`) and writes what changed (`takeChanged`) in the transaction of its next
 * enqueue, so a restarted or resumed platform does not resend an unchanged value. A crash
 * between a value's delivery being stored and the gate's write resends that one value once
 * (a duplicate value, never a lost change).
 */
/** How long a minute's value is remembered for its revisions: the look-back window (5 minutes) with room to spare. */
const MINUTE_MEMORY_MS = 15 * 60_000;

export class ValueChangeGate {
  readonly #last = new Map<string, string>();
  /** Per subscription, subject and minute: the value it last had for that minute (revisions only compare with it). */
  readonly #minutes = new Map<string, { timestamp: number; value: string }>();
  #sweptAt = -Infinity;
  /** Keys admitted since the last `takeChanged`, with their subscription and subject. */
  readonly #changed = new Map<string, LastValue>();

  /** The stored last values (at start, before any event). */
  load(values: readonly LastValue[]): void {
    for (const v of values) this.#last.set(`${v.subscriptionId}|${v.subject}`, v.value);
  }

  /** True when the event must be sent; records it as sent. */
  admit(subscriptionId: string, e: EventEnvelope, revision: number): boolean {
    const subject = `${e.type}|${subjectOf(e)}`;
    const key = `${subscriptionId}|${subject}`;
    const value = JSON.stringify(e.data);
    const prev = this.#last.get(key);
    if (prev !== value) {
      this.#last.set(key, value);
      this.#changed.set(key, { subscriptionId, subject, value });
    }
    // Only minute-aligned events are revised: the others are never remembered per instant.
    if (!e.type.endsWith('_1M')) return revision > 0 || prev !== value;
    const minuteKey = `${key}|${e.timestamp}`;
    const before = this.#minutes.get(minuteKey)?.value;
    this.#minutes.set(minuteKey, { timestamp: e.timestamp, value });
    this.#sweep(e.timestamp);
    return revision > 0 ? before !== value : prev !== value;
  }

  /** Drops minutes older than the memory, once per minute of event time. */
  #sweep(timestamp: number): void {
    if (timestamp < this.#sweptAt + 60_000) return;
    this.#sweptAt = timestamp;
    for (const [k, v] of this.#minutes) if (v.timestamp < timestamp - MINUTE_MEMORY_MS) this.#minutes.delete(k);
  }

  /** The values recorded since the last call (one per subscription and subject), to be stored. */
  takeChanged(): LastValue[] {
    const out = [...this.#changed.values()];
    this.#changed.clear();
    return out;
  }

  /** Forgets a deleted subscription's values. */
  forget(subscriptionId: string): void {
    const prefix = `${subscriptionId}|`;
    for (const k of this.#last.keys()) if (k.startsWith(prefix)) this.#last.delete(k);
    for (const k of this.#changed.keys()) if (k.startsWith(prefix)) this.#changed.delete(k);
    for (const k of this.#minutes.keys()) if (k.startsWith(prefix)) this.#minutes.delete(k);
  }
}

/** The space or sensor an event is about: the most specific id of its metadata. */
export function subjectOf(e: EventEnvelope): string {
  return e.metadata[eventTypeRow(e.type).subjectKey] ?? '';
}
