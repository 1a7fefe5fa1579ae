import { isoUtc } from '../core/time.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { DoorCrossing } from '../sim/types.js';
import type { TruthRecorder } from '../sim/truth.js';

/**
 * `--truth truth.ndjson`: the ground truth of a run as newline-delimited JSON, for users who
 * plot it themselves. Deterministic (same scenario and seed → same bytes): one `run` line,
 * then a `minute` line per space and minute (spaces floor by floor: the floor, its rooms, its
 * zones; minutes ascending), then a `crossing` line per door crossing in time order (ties:
 * door order of the scenario, then person). docs/report.md describes every field.
 */
export type TruthLine =
  | { type: 'run'; scenario: string; seed: number; start: string; durationMs: number; tickMs: number }
  | {
      type: 'minute';
      space: string;
      kind: 'floor' | 'room' | 'zone';
      name: string;
      minute: string;
      minuteMs: number;
      count: number;
    }
  | {
      type: 'crossing';
      door: string;
      name: string;
      person: string;
      at: string;
      atMs: number;
      direction: 'in' | 'out';
      from: string | null;
      to: string | null;
    };

export interface TruthSpace {
  id: string;
  name: string;
  kind: 'floor' | 'room' | 'zone';
  floorId: string;
}

/** The model's spaces in report order: floor by floor, the floor, then its rooms, then its zones. */
export function truthSpaces(model: ScenarioModel): TruthSpace[] {
  return model.floors.flatMap((f) => [
    { id: f.id, name: f.name, kind: 'floor' as const, floorId: f.id },
    ...model.rooms
      .filter((r) => r.floorId === f.id)
      .map((r) => ({ id: r.id, name: r.name, kind: 'room' as const, floorId: f.id })),
    ...model.zones
      .filter((z) => z.floorId === f.id)
      .map((z) => ({ id: z.id, name: z.name, kind: 'zone' as const, floorId: f.id })),
  ]);
}

/** Every crossing of the run in time order; ties in the scenario's door order, then by person. */
export function allCrossings(model: ScenarioModel, truth: TruthRecorder): DoorCrossing[] {
  const doorRank = new Map(model.doors.map((d, i) => [d.id, i]));
  return model.doors
    .flatMap((d) => truth.crossings(d.id))
    .sort(
      (a, b) =>
        a.atMs - b.atMs ||
        (doorRank.get(a.doorId) ?? 0) - (doorRank.get(b.doorId) ?? 0) ||
        (a.personId < b.personId ? -1 : a.personId > b.personId ? 1 : 0),
    );
}

export function* truthLines(model: ScenarioModel, truth: TruthRecorder): Generator<TruthLine> {
  yield {
    type: 'run',
    scenario: model.name,
    seed: model.seed,
    start: isoUtc(model.startMs),
    durationMs: model.durationMs,
    tickMs: model.tickMs,
  };
  for (const s of truthSpaces(model)) {
    const series = [...truth.minuteSeries(s.id)].sort((a, b) => a[0] - b[0]);
    for (const [minuteMs, count] of series)
      yield { type: 'minute', space: s.id, kind: s.kind, name: s.name, minute: isoUtc(minuteMs), minuteMs, count };
  }
  const doors = new Map(model.doors.map((d) => [d.id, d]));
  for (const c of allCrossings(model, truth)) {
    const d = doors.get(c.doorId);
    // 'in' goes from the door's fromRoomId side to its toRoomId side (null: outside the floor).
    const [from, to] =
      c.direction === 'in'
        ? [d?.fromRoomId ?? null, d?.toRoomId ?? null]
        : [d?.toRoomId ?? null, d?.fromRoomId ?? null];
    yield {
      type: 'crossing',
      door: c.doorId,
      name: d?.name ?? c.doorId,
      person: c.personId,
      at: isoUtc(c.atMs),
      atMs: c.atMs,
      direction: c.direction,
      from,
      to,
    };
  }
}

/** Writes the lines through `write` one at a time: a long run's truth is never one string. */
export function writeTruth(model: ScenarioModel, truth: TruthRecorder, write: (chunk: string) => void): number {
  let n = 0;
  for (const line of truthLines(model, truth)) {
    write(`${JSON.stringify(line)}\n`);
    n++;
  }
  return n;
}
