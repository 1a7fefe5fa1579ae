import type { EventEnvelope } from '../cloud/events.js';

/**
 * `send_on_value_change` (spec §6 rule 4): a subscription with it receives an event only when
 * the value differs from the last one it was sent for the same subject — the space (occupancy)
 * or the sensor (DETECTIONS, TRAFFIC) — and type. A `_1M` revision of an earlier minute
 * (spec §6 rule 2) exists only because that minute's value changed, so it is always sent; a
 * minute's first value is compared with the last value sent. Kept in memory: after a restart
 * the first event per subject is sent again (a duplicate value, never a lost change).
 */
export class ValueChangeGate {
  readonly #last = new Map<string, string>();

  /** True when the event must be sent; records it as sent. */
  admit(subscriptionId: string, e: EventEnvelope, revision: number): boolean {
    const key = `${subscriptionId}|${e.type}|${subjectOf(e)}`;
    const value = JSON.stringify(e.data);
    const prev = this.#last.get(key);
    this.#last.set(key, value);
    return revision > 0 || prev !== value;
  }
}

/** The space or sensor an event is about: the most specific id of its metadata. */
export function subjectOf(e: EventEnvelope): string {
  const m = e.metadata;
  if (e.type === 'DETECTIONS' || e.type === 'TRAFFIC') return m.sensor_id ?? '';
  if (e.type.startsWith('ZONE')) return m.zone_id ?? '';
  if (e.type.startsWith('ROOM')) return m.room_id ?? '';
  return m.floor_id ?? '';
}
