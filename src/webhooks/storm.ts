import { canonicalEventType, EVENT_TYPES, type EventType } from '../core/event-types.js';

/**
 * Event-storm mode of a subscription (issue 29 item 3, load shapes): a target rate of events
 * per simulated second for one subscription, independent of the people, so a team can load its
 * consumer at the rate it must survive whatever the scenario's occupancy is. The events are
 * valid spec §6 bodies about the organisation's own spaces and sensors, enqueued in the
 * subscription's outbox and delivered, signed and counted like every other (webhooks/event-storm.ts).
 *
 * Declared per subscription in a scenario's `webhooks[].storm` (checked with file:line by the
 * scenario schema) or for every subscription without its own with `--webhook-storm` (parsed
 * here). The bound is one table, shared with the scenario schema (a test pins that they agree).
 */
export interface WebhookStorm {
  /** Events per simulated second. */
  rate: number;
  /** Which types, taken in turn (a subset of the subscription's); absent: every type of the subscription. */
  types?: readonly EventType[];
}

/**
 * At most 50,000 events per simulated second per subscription: above the fleet's 30,000/s
 * (issue 29 item 4) and above what one 2-core machine delivers (~19,000/s measured), so every
 * storm a machine can carry can be asked for, and a typo (5e6) cannot fill the disk.
 */
export const STORM_BOUNDS = { rate: { min: 1, max: 50_000 } } as const;

export type StormParse = { ok: true; storm: WebhookStorm } | { ok: false; col: number; message: string };

/**
 * `--webhook-storm RATE[/TYPE+TYPE…]`: e.g. `5000` or `5000/DETECTIONS+ROOM_OCCUPANCY_1M`.
 * An error names its column (1-based).
 */
export function parseWebhookStorm(text: string): StormParse {
  const slash = text.indexOf('/');
  const rateText = slash < 0 ? text : text.slice(0, slash);
  const rate = Number(rateText);
  const { min, max } = STORM_BOUNDS.rate;
  if (rateText.trim() === '' || !Number.isInteger(rate) || rate < min || rate > max)
    return {
      ok: false,
      col: 1,
      message: `the rate must be an integer number of events per second in ${min}..${max}, got ${JSON.stringify(rateText)}`,
    };
  if (slash < 0) return { ok: true, storm: { rate } };
  const types: EventType[] = [];
  let col = slash + 2;
  for (const part of text.slice(slash + 1).split('+')) {
    const t = canonicalEventType(part);
    if (t === null)
      return {
        ok: false,
        col,
        message: `unknown event type ${JSON.stringify(part)} (one of ${EVENT_TYPES.join(', ')})`,
      };
    if (!types.includes(t)) types.push(t);
    col += part.length + 1;
  }
  return { ok: true, storm: { rate, types } };
}

/** What a storm did to a subscription: its rate, the events it enqueued, and those delivered (answered 2xx). */
export interface StormCounts {
  rate: number;
  generated: number;
  delivered: number;
}

/** Storm event ids: `event_<id>` as spec §6 writes them, told apart from the platform's own (24 hex digits) by `storm_`. */
export const STORM_ID_PREFIX = 'event_storm_';

export function isStormEvent(eventId: string): boolean {
  return eventId.startsWith(STORM_ID_PREFIX);
}

/** What is wrong with a storm given programmatically (the scenario schema and the flag check the same), or null. */
export function stormProblem(storm: WebhookStorm): string | null {
  const { min, max } = STORM_BOUNDS.rate;
  if (!Number.isInteger(storm.rate) || storm.rate < min || storm.rate > max)
    return `rate: an integer number of events per second in ${min}..${max}, got ${storm.rate}`;
  if (storm.types?.length === 0)
    return 'types: name at least one event type, or leave it out for all of the subscription’s';
  return null;
}
