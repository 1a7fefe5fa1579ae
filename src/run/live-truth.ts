import type { LiveTruth } from '../platform/platform.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { World } from '../sim/types.js';

/**
 * The simulator's side of the live view: once per simulated second, where every person is
 * (per floor, to the centimetre) and how many are in each room, handed to the platform's
 * `/live`. Read-only on the world: results do not depend on it.
 */
export const LIVE_EVERY_MS = 1000;

export function liveTruthStepper(
  model: ScenarioModel,
  publish: (t: LiveTruth) => void,
): (t: number, world: World) => void {
  const floors = model.floors.map((f) => f.id);
  const cm = (v: number): number => Math.round(v * 100) / 100;
  return (t, world) => {
    // The first tick, then every LIVE_EVERY_MS of simulated time.
    if ((t - model.startMs) % LIVE_EVERY_MS !== 0) return;
    publish(liveTruthAt(t, world, floors, cm));
  };
}

export function liveTruthAt(
  t: number,
  world: World,
  floorIds: readonly string[],
  round: (v: number) => number = (v) => v,
): LiveTruth {
  const people: LiveTruth['people'] = {};
  const rooms: LiveTruth['rooms'] = {};
  for (const f of floorIds) {
    const on = world.peopleOnFloor(f);
    people[f] = on.map((p) => [p.id, round(p.x), round(p.y)]);
    for (const p of on) if (p.roomId !== null) rooms[p.roomId] = (rooms[p.roomId] ?? 0) + 1;
  }
  return { atMs: t, people, rooms };
}
