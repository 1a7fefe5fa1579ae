import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { localToEpoch } from '../../src/core/time.js';
import { stableId } from '../../src/core/ids.js';
import type { DoorCrossing } from '../../src/sim/types.js';
import { createWorld } from '../../src/sim/world.js';
import { DOOR, FLOOR, fixtureModel, population, ROOM, runWorld, TZ } from './fixtures.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

const at = (local: string): number => localToEpoch(local, TZ)!;

/** Positions of everyone every `every` ticks, plus all crossings, as comparable data. */
function trace(model: ScenarioModel, every = 30): { frames: string[]; crossings: DoorCrossing[] } {
  const world = createWorld(model);
  const frames: string[] = [];
  const crossings: DoorCrossing[] = [];
  let i = 0;
  runWorld(model, world, (step) => {
    crossings.push(...step.crossings);
    if (i++ % every === 0)
      frames.push(
        world
          .peopleOnFloor(FLOOR)
          .map((p) => `${p.id}@${p.x},${p.y},${p.roomId},${p.posture}`)
          .join(';'),
      );
  });
  return { frames, crossings };
}

const morning = (seed = 7) => fixtureModel({ seed, durationMs: 3 * 3_600_000 });

describe('world', () => {
  it('is deterministic: the same seed gives identical positions and crossings', () => {
    expect(trace(morning())).toEqual(trace(morning()));
  });

  it('gives different paths for a different seed', () => {
    expect(trace(morning(8)).frames).not.toEqual(trace(morning(7)).frames);
  });

  it('keeps each person on its own stream: adding a population leaves the first one’s paths unchanged', () => {
    const alone = fixtureModel({ durationMs: 3 * 3_600_000, populations: [population('pop_staff', 5)] });
    const withOthers = fixtureModel({
      durationMs: 3 * 3_600_000,
      populations: [population('pop_staff', 5), population('pop_visitors', 7)],
    });
    const staffIds = new Set(Array.from({ length: 5 }, (_, i) => stableId('person', 'pop_staff', String(i))));
    const staffOnly = (frames: string[]) =>
      frames.map((f) => f.split(';').filter((p) => staffIds.has(p.split('@')[0]!)));
    const a = trace(alone);
    const b = trace(withOthers);
    expect(b.crossings.length).toBeGreaterThan(a.crossings.length);
    expect(staffOnly(b.frames)).toEqual(staffOnly(a.frames));
    expect(b.crossings.filter((c) => staffIds.has(c.personId))).toEqual(a.crossings);
  });

  it('brings people in through the entrance and sends them out the same way, one in and one out each', () => {
    const model = fixtureModel({ start: '2026-03-02T07:00', durationMs: 12 * 3_600_000 });
    const { crossings } = trace(model, 1_000_000);
    const entrance = crossings.filter((c) => c.doorId === DOOR.entrance);
    expect(entrance.filter((c) => c.direction === 'in')).toHaveLength(12);
    expect(entrance.filter((c) => c.direction === 'out')).toHaveLength(12);
    const byPerson = new Map<string, DoorCrossing[]>();
    for (const c of crossings) byPerson.set(c.personId, [...(byPerson.get(c.personId) ?? []), c]);
    expect(byPerson.size).toBe(12);
    for (const list of byPerson.values()) {
      expect([list[0]!.doorId, list[0]!.direction]).toEqual([DOOR.entrance, 'in']);
      expect([list.at(-1)!.doorId, list.at(-1)!.direction]).toEqual([DOOR.entrance, 'out']);
    }
    expect(crossings.every((c) => c.along >= 0 && c.along <= 1)).toBe(true);
  });

  it('reports each crossing at an instant within the tick that contains it', () => {
    const model = morning();
    const world = createWorld(model);
    let n = 0;
    runWorld(model, world, (step) => {
      for (const c of step.crossings) {
        n++;
        expect(c.atMs).toBeGreaterThan(step.atMs - model.tickMs);
        expect(c.atMs).toBeLessThanOrEqual(step.atMs);
      }
    });
    expect(n).toBeGreaterThan(24);
  });

  it('keeps sitting people perfectly still', () => {
    const model = morning();
    const world = createWorld(model);
    const last = new Map<string, { x: number; y: number; posture: string }>();
    let sittingTicks = 0;
    const moved: string[] = [];
    runWorld(model, world, (step) => {
      for (const p of world.peopleOnFloor(FLOOR)) {
        let prev = last.get(p.id);
        if (prev?.posture === 'sitting' && p.posture === 'sitting') {
          sittingTicks++;
          if (p.x !== prev.x || p.y !== prev.y) moved.push(`${p.id} at ${step.atMs}`);
        }
        if (!prev) last.set(p.id, (prev = { x: 0, y: 0, posture: '' }));
        prev.x = p.x;
        prev.y = p.y;
        prev.posture = p.posture;
      }
    });
    expect(moved).toEqual([]);
    expect(sittingTicks).toBeGreaterThan(12 * 3600);
  });

  it('starts with people whose arrival has passed already seated at their desks', () => {
    const model = fixtureModel({ start: '2026-03-02T09:00', durationMs: 60_000 });
    const world = createWorld(model);
    const step = world.step(model.startMs);
    expect(step.crossings).toEqual([]);
    const people = world.peopleOnFloor(FLOOR);
    expect(people).toHaveLength(12);
    expect(world.presentCount()).toBe(12);
    for (const p of people) expect([p.roomId, p.posture]).toEqual([ROOM.office, 'sitting']);
  });

  it('never shows people whose departure was before the start, until their next day', () => {
    const model = fixtureModel({ start: '2026-03-02T19:00', durationMs: 3 * 3_600_000 });
    const world = createWorld(model);
    let seen = 0;
    runWorld(model, world, (step) => {
      seen += world.presentCount() + step.crossings.length;
    });
    expect(seen).toBe(0);
  });

  it('keeps working across local midnight: the next day’s arrivals happen', () => {
    const model = fixtureModel({ start: '2026-03-02T18:00', durationMs: 16 * 3_600_000 });
    const world = createWorld(model);
    const ins: DoorCrossing[] = [];
    let presentAt930 = -1;
    const t930 = at('2026-03-03T09:30');
    runWorld(model, world, (step) => {
      ins.push(...step.crossings.filter((c) => c.doorId === DOOR.entrance && c.direction === 'in'));
      if (step.atMs === t930) presentAt930 = world.presentCount();
    });
    expect(ins).toHaveLength(12);
    for (const c of ins) expect(c.atMs).toBeGreaterThan(at('2026-03-03T07:00'));
    expect(presentAt930).toBe(12);
  });

  it('refuses a step that is not one tick after the previous one', () => {
    const model = morning();
    const world = createWorld(model);
    world.step(model.startMs);
    expect(() => world.step(model.startMs + 2 * model.tickMs)).toThrow(RangeError);
  });

  it('rejects a population whose desks cannot be reached from its entrance', () => {
    const model = fixtureModel();
    const cut = {
      ...model,
      doors: model.doors.filter((d) => d.id !== DOOR.officeKitchen),
      populations: [population('p', 1, { homeRoomIds: [ROOM.kitchen] })],
    };
    let caught: unknown;
    try {
      createWorld(cut);
    } catch (err) {
      caught = err;
    }
    expect(isAppError(caught, 'SCENARIO_INVALID')).toBe(true);
    expect((caught as Error).message).toContain('/people/p');
  });
});
