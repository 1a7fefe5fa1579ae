import { footprintTransform, type FootprintTransform } from '../../src/core/footprint.js';
import { runBatch, type SensorBatch } from '../../src/edge/frame/kernel.js';
import { buildSpec, initialState, type FrameSpec } from '../../src/edge/frame/spec.js';
import type { StateOn } from '../../src/edge/frame/state.js';
import { POSTURE_CODE } from '../../src/edge/frame/synth.js';
import type { DoorModel, RoomModel, ScenarioModel, SensorModel } from '../../src/scenario/model.js';
import type { Posture } from '../../src/sim/types.js';
import { presenceSensor } from './fixtures.js';

/** One frame sensor outside any scenario run: spec, state and world↔local mapping. */
export interface Rig {
  sensor: SensorModel;
  spec: FrameSpec;
  state: StateOn<ArrayBuffer>;
  view: FootprintTransform;
  lastTick: number;
}

export interface WorldPerson {
  id: number;
  x: number;
  y: number;
  posture?: Posture;
}

export const START_MS = 1_000_000;

/** Just enough of a scenario for buildSpec/initialState: rooms either side of an optional door. */
export function rig(
  over: Partial<SensorModel> = {},
  doors: DoorModel[] = [],
  rooms: RoomModel[] = [],
  seed = 1,
  parallax?: boolean,
): Rig {
  const sensor = presenceSensor(over);
  const model = { seed, startMs: START_MS, doors, rooms } as unknown as ScenarioModel;
  const spec = buildSpec(model, sensor, parallax);
  return {
    sensor,
    spec,
    state: initialState(model, sensor, spec),
    view: footprintTransform(sensor),
    lastTick: START_MS - 1000,
  };
}

/** Runs the sensor over consecutive 1 s ticks with these people per tick; returns the flat output. */
export function runTicks(r: Rig, ticks: WorldPerson[][]): Float64Array {
  const all = [ticks[0] ?? [], ...ticks];
  const times = [r.lastTick, ...ticks.map((_, i) => r.lastTick + 1000 * (i + 1))];
  const offsets: number[] = [];
  const ids: number[] = [];
  const people: number[] = [];
  for (const list of all) {
    offsets.push(ids.length);
    for (const p of list) {
      const [lx, ly] = r.view.toLocal(p.x, p.y);
      ids.push(p.id);
      people.push(lx * r.view.side, ly * r.view.side, POSTURE_CODE[p.posture ?? 'standing'], 32);
    }
  }
  offsets.push(ids.length);
  r.lastTick = times[times.length - 1] as number;
  const batch: SensorBatch = {
    ticks: Float64Array.from(times),
    offsets: Int32Array.from(offsets),
    ids: Int32Array.from(ids),
    people: Float32Array.from(people),
  };
  return runBatch(r.spec, r.state, batch);
}

/** The last frame's detections in world coordinates. */
export function lastDetections(r: Rig): Array<[number, number]> {
  const n = r.state.det[0] as number;
  const out: Array<[number, number]> = [];
  for (let d = 0; d < n; d++)
    out.push([...r.view.toWorld(r.state.det[1 + 2 * d] as number, r.state.det[2 + 2 * d] as number)]);
  return out;
}
