import { describe, expect, it } from 'vitest';
import { ConsumerState, stateNdjson, type ApplyMode, type StateEvent } from '../../src/webhooks/consumer-state.js';

const T0 = Date.UTC(2026, 2, 2, 8, 0);
const room = (minute: number, value: number): StateEvent => ({
  type: 'ROOM_OCCUPANCY_1M',
  timestamp: T0 + minute * 60_000,
  metadata: { room_id: 'room_a', floor_id: 'floor_a' },
  data: value,
});
const traffic = (second: number, inn: number, out: number): StateEvent => ({
  type: 'TRAFFIC',
  timestamp: T0 + second * 1000,
  metadata: { sensor_id: 'abc' },
  data: { in: inn, out },
});

/** Arrivals as (webhook-id, sequence, event), folded by a consumer of `mode`. */
function fold(mode: ApplyMode, arrivals: ReadonlyArray<[string, number, StateEvent]>): unknown[] {
  const s = new ConsumerState(mode);
  for (const [id, seq, e] of arrivals) s.apply(id, seq, e);
  return s.rows().map((r) => r.value);
}

describe('the state a consumer holds', () => {
  const duplicated: Array<[string, number, StateEvent]> = [
    ['e1', 1, traffic(5, 1, 0)],
    ['e1', 1, traffic(5, 1, 0)],
    ['e2', 2, traffic(20, 2, 1)],
  ];
  it('sums a minute of TRAFFIC once per webhook-id; the naive consumer counts a duplicate twice', () => {
    expect(fold('idempotent', duplicated)).toEqual([{ in: 3, out: 1 }]);
    expect(fold('naive', duplicated)).toEqual([{ in: 4, out: 1 }]);
  });

  const revisedLate: Array<[string, number, StateEvent]> = [
    ['r0', 10, room(0, 3)],
    ['r2', 30, room(0, 5)],
    ['r1', 20, room(0, 4)], // an older revision arriving last (a retry, a reordering)
  ];
  it('keeps the latest revision of a minute by sequence; naive keeps the last to arrive, first-wins the first', () => {
    expect(fold('idempotent', revisedLate)).toEqual([5]);
    expect(fold('naive', revisedLate)).toEqual([4]);
    expect(fold('first-wins', revisedLate)).toEqual([3]);
  });

  it('skips events it cannot place (unknown type, no subject) without failing', () => {
    const s = new ConsumerState('idempotent');
    s.apply('x', 1, { type: 'OTHER', timestamp: T0, metadata: {}, data: 1 });
    s.apply('y', 2, { type: 'ROOM_OCCUPANCY_1M', timestamp: T0, metadata: {}, data: 1 });
    expect(s.rows()).toEqual([]);
    expect(s.skipped).toBe(2);
  });

  it('writes the documented NDJSON shape, ordered by type, subject and minute', () => {
    const s = new ConsumerState('idempotent');
    s.apply('b', 2, room(1, 2));
    s.apply('a', 1, room(0, 1));
    s.apply('c', 3, {
      type: 'DETECTIONS',
      timestamp: T0,
      metadata: { sensor_id: 'abc' },
      data: {
        local: [
          [1, 2],
          [3, 4],
        ],
        world: [
          [1, 2],
          [3, 4],
        ],
      },
    });
    expect(stateNdjson(s.rows())).toBe(
      [
        `{"type":"DETECTIONS","subject":"abc","minute":${T0},"value":2}`,
        `{"type":"ROOM_OCCUPANCY_1M","subject":"room_a","minute":${T0},"value":1}`,
        `{"type":"ROOM_OCCUPANCY_1M","subject":"room_a","minute":${T0 + 60_000},"value":2}`,
        '',
      ].join('\n'),
    );
  });
});
