import { describe, expect, it } from 'vitest';
import {
  canonicalEventType,
  EVENT_TYPE_TABLE,
  EVENT_TYPES,
  eventTypeRow,
  occupancyEventType,
} from '../../src/core/event-types.js';
import { stableId } from '../../src/core/ids.js';

describe('the event-type table', () => {
  it('holds each type of spec §6 once', () => {
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPE_TABLE.length);
    expect([...EVENT_TYPES].sort()).toEqual(
      [
        'DETECTIONS',
        'TRAFFIC',
        'FLOOR_OCCUPANCY',
        'ROOM_OCCUPANCY',
        'ZONE_OCCUPANCY',
        'FLOOR_OCCUPANCY_1M',
        'ROOM_OCCUPANCY_1M',
        'ZONE_OCCUPANCY_1M',
      ].sort(),
    );
  });

  it('gives each kind of space its minute and instant types, and refuses an id of no space kind', () => {
    expect(occupancyEventType(stableId('space', 'f'), true)).toBe('FLOOR_OCCUPANCY_1M');
    expect(occupancyEventType(stableId('room', 'r'), false)).toBe('ROOM_OCCUPANCY');
    expect(occupancyEventType(stableId('zone', 'z'), true)).toBe('ZONE_OCCUPANCY_1M');
    // The old lookup fell back to ZONE_OCCUPANCY_1M for anything it did not know.
    expect(() => occupancyEventType(stableId('sensor', 's'), true)).toThrow(/no occupancy event type/);
    expect(() => occupancyEventType('nounderscore', false)).toThrow(/no occupancy event type/);
  });

  it('reads input spellings case-insensitively, _1MIN for _1M, and nothing else', () => {
    expect(canonicalEventType(' room_occupancy_1min ')).toBe('ROOM_OCCUPANCY_1M');
    expect(canonicalEventType('traffic')).toBe('TRAFFIC');
    expect(canonicalEventType('TRAFFIC_1M')).toBeNull();
    expect(canonicalEventType('')).toBeNull();
  });

  it('throws on an unknown type rather than defaulting', () => {
    expect(eventTypeRow('ZONE_OCCUPANCY').subjectKey).toBe('zone_id');
    expect(() => eventTypeRow('ZONE')).toThrow(/unknown event type/);
  });
});
