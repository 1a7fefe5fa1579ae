import { describe, expect, it } from 'vitest';
import { distanceToBoundary, pointInPolygon, type Vec2 } from '../../src/core/geometry.js';
import { rngFor } from '../../src/core/rng.js';
import { buildFloorPlan } from '../../src/sim/floorplan.js';
import { randomSpot, WALL_CLEARANCE_M } from '../../src/sim/spots.js';
import { fixtureModel, ROOM } from './fixtures.js';

const model = fixtureModel();
const plan = buildFloorPlan(model, model.floors[0]!);

describe('random spots', () => {
  it('lie inside the room, clear of the walls, even in an L-shaped room', () => {
    const office = plan.rooms.get(ROOM.office)!;
    const rng = rngFor(3, 'spots');
    for (let i = 0; i < 200; i++) {
      const p = randomSpot(office, rng);
      expect(pointInPolygon(p[0], p[1], office.polygon)).toBe(true);
      expect(distanceToBoundary(p, office.polygon)).toBeGreaterThanOrEqual(WALL_CLEARANCE_M);
    }
  });

  it('keep the requested spacing from spots already taken', () => {
    const meeting = plan.rooms.get(ROOM.meeting)!;
    const rng = rngFor(3, 'seats');
    const taken: Vec2[] = [];
    for (let i = 0; i < 8; i++) taken.push(randomSpot(meeting, rng, taken, 0.8));
    for (const p of taken)
      for (const q of taken) if (p !== q) expect(Math.hypot(p[0] - q[0], p[1] - q[1])).toBeGreaterThanOrEqual(0.8);
  });
});
