import { describe, expect, it } from 'vitest';
import { localToEpoch } from '../../src/core/time.js';
import { createWorld } from '../../src/sim/world.js';
import { FLOOR, fixtureModel, meeting, population, ROOM, runWorld, TZ } from './fixtures.js';

const at = (local: string): number => localToEpoch(local, TZ)!;

describe('daily meetings', () => {
  it('fill the room with the requested number of people, seated at distinct spots, for their duration', () => {
    const model = fixtureModel({
      start: '2026-03-02T09:00',
      durationMs: 2 * 3_600_000,
      meetings: [meeting({ attendees: 5 })],
    });
    const world = createWorld(model);
    const counts = new Map<number, number>();
    let seats: string[] = [];
    const probes = ['09:59', '10:02', '10:15', '10:29', '10:33'].map((hm) => at(`2026-03-02T${hm}`));
    runWorld(model, world, (step) => {
      if (!probes.includes(step.atMs)) return;
      const inRoom = world.peopleOnFloor(FLOOR).filter((p) => p.roomId === ROOM.meeting);
      counts.set(step.atMs, inRoom.length);
      if (step.atMs === probes[2]) {
        expect(inRoom.every((p) => p.posture === 'sitting')).toBe(true);
        seats = inRoom.map((p) => `${p.x},${p.y}`);
      }
    });
    expect([...counts.values()]).toEqual([0, 5, 5, 5, 0]);
    expect(new Set(seats).size).toBe(5);
  });

  it('take everyone seated when fewer people than attendees are in', () => {
    const model = fixtureModel({
      start: '2026-03-02T09:00',
      durationMs: 2 * 3_600_000,
      populations: [population('pop_few', 3, { activities: [] })],
      meetings: [meeting({ attendees: 8 })],
    });
    const world = createWorld(model);
    let during = -1;
    const probe = at('2026-03-02T10:10');
    runWorld(model, world, (step) => {
      if (step.atMs === probe) during = world.peopleOnFloor(FLOOR).filter((p) => p.roomId === ROOM.meeting).length;
    });
    expect(during).toBe(3);
  });

  it('recur every local day', () => {
    const model = fixtureModel({
      start: '2026-03-02T09:00',
      durationMs: 26 * 3_600_000,
      meetings: [meeting({ attendees: 2 })],
    });
    const world = createWorld(model);
    const probes = [at('2026-03-02T10:10'), at('2026-03-03T10:10')];
    const seen: number[] = [];
    runWorld(model, world, (step) => {
      if (probes.includes(step.atMs))
        seen.push(world.peopleOnFloor(FLOOR).filter((p) => p.roomId === ROOM.meeting).length);
    });
    expect(seen).toEqual([2, 2]);
  });
});
