/**
 * The event types of spec §6, one row each: the one table the rest derives from — the list a
 * subscription may name (webhooks), the scenario schema's check, the type the recompute gives
 * a space's minute or instant, and the subject an event is about (value-change filtering).
 * A type missing here does not exist: every lookup of an unknown type or space kind throws,
 * none falls back to a default.
 */
export const EVENT_TYPE_TABLE = [
  { type: 'DETECTIONS', subject: 'sensor', subjectKey: 'sensor_id', minuteAligned: false, data: 'points' },
  { type: 'TRAFFIC', subject: 'sensor', subjectKey: 'sensor_id', minuteAligned: false, data: 'in-out' },
  { type: 'FLOOR_OCCUPANCY', subject: 'space', subjectKey: 'floor_id', minuteAligned: false, data: 'count' },
  { type: 'ROOM_OCCUPANCY', subject: 'room', subjectKey: 'room_id', minuteAligned: false, data: 'count' },
  { type: 'ZONE_OCCUPANCY', subject: 'zone', subjectKey: 'zone_id', minuteAligned: false, data: 'count' },
  { type: 'FLOOR_OCCUPANCY_1M', subject: 'space', subjectKey: 'floor_id', minuteAligned: true, data: 'count' },
  { type: 'ROOM_OCCUPANCY_1M', subject: 'room', subjectKey: 'room_id', minuteAligned: true, data: 'count' },
  { type: 'ZONE_OCCUPANCY_1M', subject: 'zone', subjectKey: 'zone_id', minuteAligned: true, data: 'count' },
] as const;

export type EventTypeRow = (typeof EVENT_TYPE_TABLE)[number];
export type EventType = EventTypeRow['type'];

export const EVENT_TYPES: readonly EventType[] = EVENT_TYPE_TABLE.map((r) => r.type);

const BY_TYPE = new Map<string, EventTypeRow>(EVENT_TYPE_TABLE.map((r) => [r.type, r]));

/** The row of a type; throws on a type the table does not hold (a programming error). */
export function eventTypeRow(type: string): EventTypeRow {
  const row = BY_TYPE.get(type);
  if (row === undefined) throw new Error(`unknown event type ${JSON.stringify(type)}`);
  return row;
}

/**
 * The canonical type of an input spelling (case-insensitive; `_1MIN`, the spelling some
 * published clients send, stands for `_1M`), or null when it names no type.
 */
export function canonicalEventType(input: string): EventType | null {
  const upper = input.trim().toUpperCase();
  const t = upper.endsWith('_1MIN') ? upper.slice(0, -2) : upper;
  return BY_TYPE.get(t)?.type ?? null;
}

const OCCUPANCY_BY_SUBJECT = new Map<string, { instant: EventType; minute: EventType }>();
for (const r of EVENT_TYPE_TABLE) {
  if (r.data !== 'count') continue;
  const entry = OCCUPANCY_BY_SUBJECT.get(r.subject) ?? { instant: r.type, minute: r.type };
  if (r.minuteAligned) entry.minute = r.type;
  else entry.instant = r.type;
  OCCUPANCY_BY_SUBJECT.set(r.subject, entry);
}

/**
 * The occupancy type of a space id (`space_…` a floor, `room_…`, `zone_…`): its minute
 * (`_1M`) type or its instantaneous one. Throws on an id of no space kind.
 */
export function occupancyEventType(spaceId: string, minuteAligned: boolean): EventType {
  const entry = OCCUPANCY_BY_SUBJECT.get(spaceId.slice(0, spaceId.indexOf('_')));
  if (entry === undefined) throw new Error(`no occupancy event type for space id ${JSON.stringify(spaceId)}`);
  return minuteAligned ? entry.minute : entry.instant;
}
