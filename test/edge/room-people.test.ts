import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RoomPeople } from '../../src/edge/room-people.js';
import type { PersonState } from '../../src/sim/types.js';

const SEED = 2611;
const ROOMS = ['room_a', 'room_b', 'room_c', 'room_d'];

const person = (i: number, roomId: string | null): PersonState => ({
  id: `person_${i}`,
  floorId: 'floor_1',
  roomId,
  x: i,
  y: -i,
  posture: 'sitting',
});

describe('a floor’s people by room', () => {
  it(`gives each room the floor's people of that room, in the floor's order, instant after instant (fast-check seed ${SEED})`, () => {
    // Rooms b and c are watched (a sensor's room), a and d are not; instants reuse one grouping.
    const grouping = new RoomPeople(['room_b', 'room_c', 'room_b']);
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(...ROOMS, null), { maxLength: 200 }), { minLength: 1, maxLength: 6 }),
        (instants) => {
          for (const rooms of instants) {
            const people = rooms.map((r, i) => person(i, r));
            grouping.fill(people);
            for (const room of ['room_b', 'room_c']) {
              const slot = grouping.slotOf(room);
              expect(grouping.people.slice(grouping.start(slot), grouping.end(slot))).toEqual(
                people.filter((p) => p.roomId === room),
              );
            }
          }
          expect(grouping.slotOf('room_a')).toBe(-1);
          expect(grouping.slotOf(null)).toBe(-1);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });
});
