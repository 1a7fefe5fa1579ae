import type { EventEnvelope } from '../cloud/events.js';
import type { DeliveryInsert } from '../cloud/store/webhook-port.js';
import { bareId } from '../core/ids.js';
import { matchesFilters } from './filters.js';
import type { Subscription } from './subscription.js';
import { ValueChangeGate } from './value-change.js';

/**
 * Which subscriptions receive an event, and the body they receive. The body is fixed here,
 * once, and stored with the delivery: every attempt and every replay sends the same bytes.
 * A subscription disabled by its user receives nothing new; one the engine disabled after
 * failing keeps receiving into its outbox (delivered once re-enabled: nothing is lost that the
 * user did not ask to drop).
 */
export class FanOut {
  /** `send_on_value_change` state; the engine loads it from the store and stores its changes. */
  readonly gate = new ValueChangeGate();

  /** Deliveries of one event (`revision`: 0, or n for the n-th recomputed value of a `_1M` minute). */
  deliveries(subscriptions: readonly Subscription[], e: EventEnvelope, revision: number, nowMs: number, out: DeliveryInsert[]): void {
    let body: string | null = null;
    for (const s of subscriptions) {
      // A subscription receives its own organisation's events only, whatever its filters say:
      // without this, one with no filters (or filters naming another organisation's ids)
      // received every tenant's events (issue 16, the isolation matrix).
      if (s.orgId !== e.metadata.org_id) continue;
      if (s.status === 'DISABLED' && s.disabledReason === 'disabled by the user') continue;
      if (!(s.eventTypes as readonly string[]).includes(e.type)) continue;
      if (!unfiltered(s.filters) && !matchesFilters(s.filters, e.metadata)) continue;
      if (s.sendOnValueChange && !this.gate.admit(s.id, e, revision)) continue;
      body ??= bodyOf(e);
      out.push({ subscriptionId: s.id, eventId: e.id, eventType: e.type, eventTimestampMs: e.timestamp, body, enqueuedAtMs: nowMs, nextAttemptMs: nowMs });
    }
  }
}

/**
 * No filter list at all (parseFilters keeps non-empty lists only): every event passes, known
 * without walking the filter keys (an array of entries per call) for each delivery.
 */
function unfiltered(filters: object): boolean {
  for (const _ in filters) return false;
  return true;
}

/**
 * The request body: the spec §6 envelope, keys in the spec's order, sensor ids bare in the
 * metadata (spec §2: `sensor_<id>` in GraphQL, bare `<id>` in webhook metadata).
 */
export function bodyOf(e: EventEnvelope): string {
  // Written as JSON.stringify would write the object, with the metadata's text computed once
  // per metadata object (one per space or sensor until the catalogue changes).
  return `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"timestamp":${JSON.stringify(e.timestamp)},"version":${JSON.stringify(e.version)},"metadata":${metadataJson(e.metadata)},"data":${JSON.stringify(e.data) ?? 'null'}}`;
}

const metadataText = new WeakMap<object, string>();

function metadataJson(m: Readonly<Record<string, string>>): string {
  let text = metadataText.get(m);
  if (text === undefined) {
    text = JSON.stringify(m.sensor_id === undefined ? m : { ...m, sensor_id: bareId(m.sensor_id) });
    metadataText.set(m, text);
  }
  return text;
}
