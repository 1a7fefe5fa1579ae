import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Vec2 } from '../../src/core/geometry.js';
import { rngFor } from '../../src/core/rng.js';
import { buildFloorPlan } from '../../src/sim/floorplan.js';
import { planPath, type Endpoint, type PlannedPath } from '../../src/sim/route.js';
import { randomSpot } from '../../src/sim/spots.js';
import { DOOR, fixtureModel, ROOM, wallViolation } from './fixtures.js';

const model = fixtureModel();
const plan = buildFloorPlan(model, model.floors[0]!);
const roomIds = [...plan.rooms.keys()];
const entrance = plan.doorsById.get(DOOR.entrance)!;

/** Walks the legs, checking each is walkable; returns the room (null = outside) at the end. */
function checkLegs(path: PlannedPath, startRoom: string | null): string | null {
  let room = startRoom;
  for (let i = 1; i < path.xs.length; i++) {
    const p: Vec2 = [path.xs[i - 1]!, path.ys[i - 1]!];
    const q: Vec2 = [path.xs[i]!, path.ys[i]!];
    expect(wallViolation(plan, p, q)).toBeNull();
    for (const c of path.crossings) if (c.dist > path.cum[i - 1]! && c.dist <= path.cum[i]!) room = c.intoRoomId;
  }
  return room;
}

describe('planning a walk across the floor', () => {
  it('never goes through a wall: each leg stays in a room or crosses exactly one door (property, seed 42)', () => {
    const endpoint = fc.record({ room: fc.nat(roomIds.length - 1), outside: fc.boolean() });
    fc.assert(
      fc.property(fc.integer(), endpoint, endpoint, (seed, a, b) => {
        const rng = rngFor(seed, 'route-test');
        const pick = (e: { room: number; outside: boolean }): Endpoint => {
          if (e.outside) return { kind: 'outside', door: entrance };
          const room = plan.rooms.get(roomIds[e.room]!)!;
          return { kind: 'inside', roomId: room.id, at: randomSpot(room, rng) };
        };
        const from = pick(a);
        const to = pick(b);
        const path = planPath(plan, from, to, rng);
        expect(path).not.toBeNull();
        const end = checkLegs(path!, from.kind === 'inside' ? from.roomId : null);
        expect(end).toBe(to.kind === 'inside' ? to.roomId : null);
        // The precomputed crossings are the ones found leg by leg, in order.
        const dists = path!.crossings.map((c) => c.dist);
        expect(dists).toEqual([...dists].sort((x, y) => x - y));
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('enters from outside through the entrance, crossing it inwards once', () => {
    const office = plan.rooms.get(ROOM.office)!;
    const path = planPath(
      plan,
      { kind: 'outside', door: entrance },
      { kind: 'inside', roomId: office.id, at: [9, 5] },
      rngFor(1, 'x'),
    )!;
    expect(path.crossings.map((c) => [c.doorId, c.direction])).toEqual([
      [DOOR.entrance, 'in'],
      [DOOR.lobbyCorridor, 'in'],
      [DOOR.corridorOffice, 'in'],
    ]);
    const first = path.crossings[0]!;
    expect(first.dist).toBeGreaterThan(0.9);
    expect(first.dist).toBeLessThan(1.1);
    expect(first.along).toBeGreaterThanOrEqual(0.1);
    expect(first.along).toBeLessThanOrEqual(0.9);
    expect(path.xs[path.xs.length - 1]).toBe(9);
  });

  it('routes room to room through the doors between them', () => {
    const kitchen = plan.rooms.get(ROOM.kitchen)!;
    const path = planPath(
      plan,
      { kind: 'inside', roomId: ROOM.meeting, at: [14, 3] },
      { kind: 'inside', roomId: kitchen.id, at: [14, 7] },
      rngFor(1, 'y'),
    )!;
    expect(path.crossings.map((c) => c.doorId)).toEqual([
      DOOR.corridorMeeting,
      DOOR.corridorOffice,
      DOOR.officeKitchen,
    ]);
    expect(path.crossings.map((c) => c.direction)).toEqual(['out', 'in', 'in']);
  });

  it('gives up (null) when no door links the rooms', () => {
    const cut = { ...plan, doors: plan.doors.filter((d) => d.id !== DOOR.officeKitchen) };
    expect(
      planPath(
        cut,
        { kind: 'inside', roomId: ROOM.office, at: [9, 5] },
        { kind: 'inside', roomId: ROOM.kitchen, at: [14, 7] },
        rngFor(1, 'z'),
      ),
    ).toBeNull();
  });
});
