import type { EventEnvelope } from '../cloud/events.js';
import type { DeliveryInsert } from '../store/webhook-port.js';
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
  deliveries(
    subscriptions: readonly Subscription[],
    e: EventEnvelope,
    revision: number,
    nowMs: number,
    out: DeliveryInsert[],
  ): void {
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
      out.push({
        subscriptionId: s.id,
        eventId: e.id,
        eventType: e.type,
        eventTimestampMs: e.timestamp,
        body,
        enqueuedAtMs: nowMs,
        nextAttemptMs: nowMs,
      });
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
 *
 * Written as `JSON.stringify` would write the object, from pieces computed once: the text
 * between the id and the timestamp once per event type, the text from the version to `"data":`
 * once per metadata object (one per space or sensor until the catalogue changes); a finite
 * number is written as `JSON.stringify` writes it (ECMA-262 SerializeJSONProperty: ToString),
 * so only the id and a non-numeric `data` go through `JSON.stringify` per event
 * (test/webhooks/fan-out.test.ts checks it against `JSON.stringify` of the envelope).
 */
export function bodyOf(e: EventEnvelope): string {
  return `{"id":${JSON.stringify(e.id)}${typeText(e.type)}${numberOrJson(e.timestamp)}${tailText(e.version, e.metadata)}${numberOrJson(e.data)}}`;
}

/** `JSON.stringify(v)`, without the call for a finite number; `null` where it gives undefined (as before: `"data":null`). */
function numberOrJson(v: unknown): string {
  if (typeof v === 'number' && Number.isFinite(v)) return `${v}`;
  return JSON.stringify(v) ?? 'null';
}

/** `,"type":<type>,"timestamp":` per event type (a handful: the map stays small; others are not kept). */
const typeTexts = new Map<string, string>();
const TYPE_TEXTS_MAX = 64;

function typeText(type: string): string {
  let text = typeTexts.get(type);
  if (text === undefined) {
    text = `,"type":${JSON.stringify(type)},"timestamp":`;
    if (typeTexts.size < TYPE_TEXTS_MAX) typeTexts.set(type, text);
  }
  return text;
}

/** `,"version":<version>,"metadata":<metadata>,"data":` per metadata object (and version: one, EVENT_VERSION). */
const tailTexts = new WeakMap<object, { version: string; text: string }>();

function tailText(version: string, m: Readonly<Record<string, string>>): string {
  const cached = tailTexts.get(m);
  if (cached !== undefined && cached.version === version) return cached.text;
  const metadata = JSON.stringify(m.sensor_id === undefined ? m : { ...m, sensor_id: bareId(m.sensor_id) });
  const text = `,"version":${JSON.stringify(version)},"metadata":${metadata},"data":`;
  tailTexts.set(m, { version, text });
  return text;
}
