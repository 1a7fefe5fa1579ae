import { availableParallelism } from 'node:os';
import { AppError, ErrorCodes } from '../core/errors.js';
import { groupBy } from '../core/group-by.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { DoorCrossing, World, WorldStep } from '../sim/types.js';
import { withAccuracy } from './accuracy.js';
import { createFrameEdgeStage, inViewAtShoulders } from './frame-stage.js';
import { ModelPresenceSensor } from './model-presence.js';
import { ModelTrafficSensor } from './model-traffic.js';
import type { SensorPacket } from './packet.js';
import { poolRunner } from './pool/frame-pool.js';
import type { EdgeStage } from './stage.js';

/** Model-fidelity sensors of one scenario, sampled once per world tick. */
export interface ModelSensors {
  /** Packets due at this tick, in sensor order (deterministic). */
  sample(step: WorldStep, world: World): SensorPacket[];
}

interface FloorSensors {
  floorId: string;
  presence: ModelPresenceSensor[];
  traffic: ModelTrafficSensor[];
}

export interface EdgeOptions {
  /** Worker threads for frame fidelity (0: in this thread); default min(4, cores). No effect at model fidelity. */
  workers?: number;
}

/**
 * The edge stage for a scenario, wrapped so it measures its own detection accuracy against
 * the true positions and crossings it observes. Frame fidelity synthesises and detects
 * thermal frames in a worker pool (frame-stage.ts); model fidelity samples in-process at
 * every tick and buffers the packets until the loop drains them.
 */
export function createEdgeStage(model: ScenarioModel, opts: EdgeOptions = {}): EdgeStage {
  if (model.fidelity === 'frame') {
    const workers = opts.workers ?? Math.max(1, Math.min(4, availableParallelism()));
    return withAccuracy(model, createFrameEdgeStage(model, { workers, poolRunner }), inViewAtShoulders);
  }
  return withAccuracy(model, createModelStage(model));
}

function createModelStage(model: ScenarioModel): EdgeStage {
  const sensors = createModelSensors(model);
  let buffer: SensorPacket[] = [];
  return {
    observe(step, world) {
      for (const p of sensors.sample(step, world)) buffer.push(p);
    },
    drain() {
      const out = buffer;
      buffer = [];
      return Promise.resolve(out);
    },
    close: () => Promise.resolve(),
  };
}

const NO_CROSSINGS: readonly DoorCrossing[] = [];

/** Sensors are grouped by floor so each floor's people are fetched once per tick. */
export function createModelSensors(model: ScenarioModel): ModelSensors {
  const doors = new Map(model.doors.map((d) => [d.id, d]));
  const byFloor = new Map<string, FloorSensors>();
  for (const floor of model.floors) byFloor.set(floor.id, { floorId: floor.id, presence: [], traffic: [] });
  for (const s of model.sensors) {
    const group = byFloor.get(s.floorId);
    if (!group) continue;
    if (s.mode === 'presence') {
      group.presence.push(new ModelPresenceSensor(s, model.noise.presence, model.seed, model.startMs));
    } else {
      const door = s.doorId === null ? undefined : doors.get(s.doorId);
      if (!door) throw new AppError(ErrorCodes.SCENARIO_INVALID, `traffic sensor ${s.name} watches no door`);
      group.traffic.push(new ModelTrafficSensor(s, door, model.noise.traffic, model.seed, model.startMs));
    }
  }
  const floors = [...byFloor.values()].filter((f) => f.presence.length + f.traffic.length > 0);

  return {
    sample(step, world) {
      const out: SensorPacket[] = [];
      // Each traffic sensor is handed its own door's crossings: handing every sensor the whole
      // fleet's crossings made a tick cost traffic sensors × crossings, both growing with the fleet.
      const byDoor = groupBy(step.crossings, (c) => c.doorId);
      for (const f of floors) {
        if (f.presence.length > 0) {
          const people = world.peopleOnFloor(f.floorId);
          for (const s of f.presence) {
            const p = s.sample(step.atMs, people);
            if (p) out.push(p);
          }
        }
        for (const s of f.traffic) {
          const p = s.sample(step.atMs, byDoor.get(s.sensor.doorId ?? '') ?? NO_CROSSINGS);
          if (p) out.push(p);
        }
      }
      return out;
    },
  };
}
