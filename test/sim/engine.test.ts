import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pointInPolygon } from '../../src/core/geometry.js';
import { createWorldWithProbe } from '../../src/sim/engine.js';
import { buildFloorPlan } from '../../src/sim/floorplan.js';
import { FLOOR, fixtureModel, meeting, population, ROOM, runWorld, wallViolation } from './fixtures.js';

/** A busy hour: people arrive, make frequent trips and a meeting convenes. */
function busyHour(seed: number) {
  return fixtureModel({
    seed,
    start: '2026-03-02T07:50',
    durationMs: 3_600_000,
    populations: [
      population('pop_busy', 6, {
        arrival: { meanMin: 8 * 60, sdMin: 5 },
        departure: { meanMin: 8 * 60 + 40, sdMin: 5 },
        activities: [
          { roomIds: [ROOM.kitchen, ROOM.lobby, ROOM.corridor, ROOM.meeting], everyMs: 4 * 60_000, dwellMs: 60_000 },
        ],
      }),
    ],
    meetings: [meeting({ atMin: 8 * 60 + 15, durationMs: 5 * 60_000, attendees: 3 })],
  });
}

describe('world engine', () => {
  it('never moves anyone through a wall, and rooms change only with a recorded crossing (property, seed 42)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (seed) => {
        const model = busyHour(seed);
        const plan = buildFloorPlan(model, model.floors[0]!);
        const problems: string[] = [];
        const world = createWorldWithProbe(model, (id, x0, y0, x1, y1) => {
          const why = wallViolation(plan, [x0, y0], [x1, y1]);
          if (why) problems.push(`${id} (${x0},${y0})→(${x1},${y1}): ${why}`);
        });
        const lastRoom = new Map<string, string | null>();
        let moved = 0;
        runWorld(model, world, (step) => {
          const seen = new Set<string>();
          for (const p of world.peopleOnFloor(FLOOR)) {
            seen.add(p.id);
            if (!pointInPolygon(p.x, p.y, plan.rooms.get(p.roomId!)!.polygon))
              problems.push(`${p.id} is not in ${p.roomId}`);
          }
          for (const p of world.peopleOnFloor(FLOOR)) moved += roomChange(p.id, p.roomId);
          for (const id of lastRoom.keys()) if (!seen.has(id)) moved += roomChange(id, null);

          function roomChange(id: string, room: string | null): number {
            const before = lastRoom.get(id) ?? null;
            lastRoom.set(id, room);
            // At the first instant people who already arrived are placed at their desks.
            if (room === before || step.atMs === model.startMs) return 0;
            const last = step.crossings.filter((c) => c.personId === id).pop();
            const door = last && plan.doorsById.get(last.doorId);
            const into = last && door && (last.direction === 'in' ? door.toRoomId : door.fromRoomId);
            if (into !== room) problems.push(`${id} changed room ${before} → ${room} without crossing into it`);
            return 1;
          }
        });
        expect(problems).toEqual([]);
        expect(moved).toBeGreaterThan(30);
      }),
      { seed: 42, numRuns: 20 },
    );
  });
});
