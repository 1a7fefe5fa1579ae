import { describe, expect, it } from 'vitest';
import { segmentInsidePolygon, type Vec2 } from '../../src/core/geometry.js';
import { buildFloorPlan } from '../../src/sim/floorplan.js';
import { pathInRoom } from '../../src/sim/roompath.js';
import { fixtureModel, ROOM } from './fixtures.js';

const model = fixtureModel();
const plan = buildFloorPlan(model, model.floors[0]!);
const corridor = plan.rooms.get(ROOM.corridor)!;

describe('walking inside a room', () => {
  it('goes straight when the room allows it', () => {
    expect(pathInRoom(corridor, [5, 5], [5, 1])).toEqual([[5, 1]]);
  });

  it('turns around the inside corner of an L-shaped room instead of cutting the wall', () => {
    const from: Vec2 = [5, 5];
    const to: Vec2 = [11, 1];
    expect(segmentInsidePolygon(from, to, corridor.polygon)).toBe(false);
    const path = pathInRoom(corridor, from, to);
    expect(path).toHaveLength(2);
    expect(path[1]).toEqual(to);
    let prev = from;
    for (const p of path) {
      expect(segmentInsidePolygon(prev, p, corridor.polygon)).toBe(true);
      prev = p;
    }
  });
});
