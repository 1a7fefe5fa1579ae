import { z } from 'zod';
import { canonicalEventType, EVENT_TYPES, type EventType } from '../core/event-types.js';

/**
 * `webhooks[].storm` of a scenario file: events at a target rate for the subscription,
 * independent of the people (docs/load-testing.md, "Event storms"; the platform makes them,
 * webhooks/event-storm.ts). The bound is webhooks/storm.ts's STORM_BOUNDS (a test pins that
 * they agree; the scenario layer does not import the platform's), so a rate above it is a
 * located `occusim validate` error. That `types` are among the subscription's `event_types` is
 * checked where the entry is resolved (scenario/resolve.ts), at the same place.
 */
export const MAX_STORM_RATE = 50_000;

export const webhookStormSchema = z
  .strictObject({
    rate: z.number().int().min(1).max(MAX_STORM_RATE).describe(`Events per simulated second, 1..${MAX_STORM_RATE}`),
    types: z
      .array(
        z.string().refine((t) => canonicalEventType(t) !== null, `an event type of spec §6: ${EVENT_TYPES.join(', ')}`),
      )
      .min(1)
      .optional()
      .describe("Event types taken in turn, among the subscription's event_types (default: all of them)"),
  })
  .describe('Event-storm mode: events at a target rate, independent of the people, delivered like every other');

export type WebhookStormFile = z.output<typeof webhookStormSchema>;

/** The storm as the platform takes it (webhooks/storm.ts `WebhookStorm`). */
export interface WebhookStormModel {
  rate: number;
  types?: EventType[];
}

export function webhookStormModel(f: WebhookStormFile): WebhookStormModel {
  if (f.types === undefined) return { rate: f.rate };
  const types: EventType[] = [];
  for (const t of f.types) {
    const c = canonicalEventType(t);
    if (c !== null && !types.includes(c)) types.push(c);
  }
  return { rate: f.rate, types };
}
