import { WebhookError, WebhookErrorCodes } from './errors.js';

/**
 * Event types of spec §6 a subscription may name. The minute-aligned variants are emitted as
 * `_1M`, the spelling of the spec §6 table and of the pipeline's outbox (`recompute.ts`);
 * `_1MIN`, the spelling some published clients send, is accepted on input and stored as `_1M`,
 * so one subscription per type per organisation holds whichever spelling created it.
 */
export const EVENT_TYPES = [
  'DETECTIONS',
  'TRAFFIC',
  'FLOOR_OCCUPANCY',
  'ROOM_OCCUPANCY',
  'ZONE_OCCUPANCY',
  'FLOOR_OCCUPANCY_1M',
  'ROOM_OCCUPANCY_1M',
  'ZONE_OCCUPANCY_1M',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN = new Set<string>(EVENT_TYPES);

/** Sensor-data types: one event per accepted packet, on the pipeline's internal stream. */
export const SENSOR_EVENT_TYPES: ReadonlySet<EventType> = new Set(['DETECTIONS', 'TRAFFIC']);

/** The canonical type of an input spelling (case-insensitive, `_1MIN` → `_1M`), or null. */
export function canonicalEventType(input: string): EventType | null {
  const upper = input.trim().toUpperCase();
  const t = upper.endsWith('_1MIN') ? upper.slice(0, -2) : upper;
  return KNOWN.has(t) ? (t as EventType) : null;
}

/** Canonical, de-duplicated, in input order; throws WEBHOOK_INVALID naming the bad entry. */
export function parseEventTypes(input: readonly string[], path: string): EventType[] {
  if (input.length === 0) throw new WebhookError(WebhookErrorCodes.WEBHOOK_INVALID, path, 'name at least one event type');
  const out: EventType[] = [];
  input.forEach((raw, i) => {
    const t = canonicalEventType(raw);
    if (t === null) throw new WebhookError(WebhookErrorCodes.WEBHOOK_INVALID, `${path}[${i}]`, `unknown event type ${JSON.stringify(raw)} (one of ${EVENT_TYPES.join(', ')}; _1MIN is accepted for _1M)`);
    if (!out.includes(t)) out.push(t);
  });
  return out;
}

/** Occupancy types whose value is a bare count (send_on_value_change compares it). */
export const isOccupancyType = (t: string): boolean => t.endsWith('_OCCUPANCY') || t.endsWith('_OCCUPANCY_1M');
