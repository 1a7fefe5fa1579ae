import { describe, expect, it } from 'vitest';
import { createTruthRecorder } from '../../src/sim/truth.js';
import type { DoorCrossing, PersonState, World } from '../../src/sim/types.js';
import { DOOR, FLOOR, fixtureModel, ROOM, ZONE } from './fixtures.js';

const model = fixtureModel({ start: '2026-03-02T08:00', tickMs: 15_000 });
const t0 = model.startMs;

const person = (id: string, roomId: string, x: number, y: number): PersonState => ({
  id,
  floorId: FLOOR,
  roomId,
  x,
  y,
  posture: 'sitting',
});
const A = person('person_a', ROOM.office, 7, 5); // inside the zone (x 6..9)
const B = person('person_b', ROOM.lobby, 2, 2);
const C = person('person_c', ROOM.office, 10, 5);
const D = person('person_d', ROOM.office, 11, 7);

/** A scripted world: the people on the floor at each tick, in order. */
function scripted(ticks: PersonState[][]): { world: World; advance(): void } {
  let i = 0;
  const world: World = {
    step: () => {
      throw new Error('not used');
    },
    peopleOnFloor: (floorId) => (floorId === FLOOR ? (ticks[i] ?? []) : []),
    presentCount: () => (ticks[i] ?? []).length,
  };
  return { world, advance: () => void i++ };
}

const crossing = (personId: string, atMs: number, direction: 'in' | 'out'): DoorCrossing => ({
  personId,
  doorId: DOOR.entrance,
  atMs,
  direction,
  along: 0.5,
});

describe('ground truth', () => {
  const ticks = [[], [A], [A, B], [A, C, D, B], [A, C], [A, C, B], []];
  function record() {
    const truth = createTruthRecorder(model);
    const { world, advance } = scripted(ticks);
    const steps = [
      [],
      [crossing('person_a', t0 + 10_000, 'in')],
      [crossing('person_b', t0 + 20_000, 'in'), crossing('person_c', t0 + 29_000, 'in')],
      [],
      [],
      [],
      [crossing('person_a', t0 + 80_000, 'out'), crossing('person_c', t0 + 81_000, 'out')],
    ];
    steps.forEach((crossings, k) => {
      truth.observe({ atMs: t0 + k * model.tickMs, crossings }, world);
      advance();
    });
    return truth;
  }

  it('reduces each minute to the median of its tick counts, per room, zone and floor', () => {
    const truth = record();
    const m0 = t0;
    const m1 = t0 + 60_000;
    // Minute 0: office 0,1,1,3 → 1; lobby 0,0,1,1 → 0.5; floor 0,1,2,4 → 1.5; zone 0,1,1,1 → 1.
    // Minute 1 (3 ticks): office 2,2,0 → 2; lobby 0,1,0 → 0; floor 2,3,0 → 2; zone 1,1,0 → 1.
    expect([...truth.minuteSeries(ROOM.office)]).toEqual([
      [m0, 1],
      [m1, 2],
    ]);
    expect([...truth.minuteSeries(ROOM.lobby)]).toEqual([
      [m0, 0.5],
      [m1, 0],
    ]);
    expect([...truth.minuteSeries(FLOOR)]).toEqual([
      [m0, 1.5],
      [m1, 2],
    ]);
    expect([...truth.minuteSeries(ZONE)]).toEqual([
      [m0, 1],
      [m1, 1],
    ]);
    expect([...truth.minuteSeries(ROOM.kitchen)]).toEqual([
      [m0, 0],
      [m1, 0],
    ]);
  });

  it('lists only observed minutes, and nothing for an unknown space', () => {
    const truth = record();
    expect(truth.minuteSeries(FLOOR).size).toBe(2);
    expect(truth.minuteSeries('room_nope').size).toBe(0);
  });

  it('records every crossing per door in time order, with totals per direction', () => {
    const truth = record();
    expect(truth.crossings(DOOR.entrance).map((c) => [c.personId, c.direction])).toEqual([
      ['person_a', 'in'],
      ['person_b', 'in'],
      ['person_c', 'in'],
      ['person_a', 'out'],
      ['person_c', 'out'],
    ]);
    expect(truth.crossings(DOOR.officeKitchen)).toEqual([]);
    expect(truth.crossingTotals().get(DOOR.entrance)).toEqual({ in: 3, out: 2 });
    expect(truth.crossingTotals().get(DOOR.officeKitchen)).toEqual({ in: 0, out: 0 });
  });
});
