import { describe, expect, it } from 'vitest';
import { distanceToBoundary, pointInPolygon } from '../../src/core/geometry.js';
import { buildFloorPlan, doorPoint, doorSide, turnPointsOf } from '../../src/sim/floorplan.js';
import { DOOR, fixtureModel, ROOM } from './fixtures.js';

const model = fixtureModel();
const plan = buildFloorPlan(model, model.floors[0]!);

describe('floor plan', () => {
  it('orients every door normal towards its toRoom side', () => {
    for (const d of plan.doors) {
      const to = plan.rooms.get(d.toRoomId)!;
      const p = doorPoint(d, 0.5, 0.3);
      expect(pointInPolygon(p[0], p[1], to.polygon)).toBe(true);
      expect(doorSide(d, p[0], p[1])).toBeGreaterThan(0);
    }
  });

  it('puts the outside of the entrance in no room', () => {
    const p = doorPoint(plan.doorsById.get(DOOR.entrance)!, 0.5, -1);
    expect(plan.roomAt(p[0], p[1])).toBeNull();
  });

  it('finds the room containing a point', () => {
    expect(plan.roomAt(5, 4)).toBe(ROOM.corridor);
    expect(plan.roomAt(5, 7)).toBe(ROOM.office);
    expect(plan.roomAt(14, 7)).toBe(ROOM.kitchen);
    expect(plan.roomAt(20, 7)).toBeNull();
  });

  it('pulls the inside corner of an L-shaped room into the room, clear of the walls', () => {
    const corridor = plan.rooms.get(ROOM.corridor)!;
    expect(corridor.turnPoints).toHaveLength(1);
    const [p] = corridor.turnPoints;
    expect(p![0]).toBeCloseTo(6 - 0.5 / Math.SQRT2, 9);
    expect(p![1]).toBeCloseTo(2 - 0.5 / Math.SQRT2, 9);
    expect(distanceToBoundary(p!, corridor.polygon)).toBeGreaterThan(0.3);
  });

  it('finds no turn points in a convex room, whichever way it is wound', () => {
    expect(
      turnPointsOf([
        [0, 0],
        [4, 0],
        [4, 3],
        [0, 3],
      ]),
    ).toEqual([]);
    expect(
      turnPointsOf([
        [0, 0],
        [0, 3],
        [4, 3],
        [4, 0],
      ]),
    ).toEqual([]);
  });
});
