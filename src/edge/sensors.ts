import { availableParallelism } from 'node:os';
import { AppError, ErrorCodes } from '../core/errors.js';
import { groupBy } from '../core/group-by.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { DoorCrossing, World, WorldStep } from '../sim/types.js';
import { withAccuracy } from './accuracy.js';
import { createFrameEdgeStage, inViewAtShoulders } from './frame-stage.js';
import { ModelPresenceSensor } from './model-presence.js';
import { ModelTrafficSensor } from './model-traffic.js';
import { RoomPeople } from './room-people.js';
import { EdgePacketWriter, unpackEdgePackets } from './edge-packets.js';
import type { SensorPacket } from './packet.js';
import { poolRunner } from './pool/frame-pool.js';
import type { EdgeStage } from './stage.js';

/** Model-fidelity sensors of one scenario, sampled once per world tick. */
export interface ModelSensors {
  /** Packets due at this tick, in sensor order (deterministic). */
  sample(step: WorldStep, world: World): SensorPacket[];
  /** The same packets written into `out` in the flat form (edge-packets.ts): what the run uses. */
  sampleInto(step: WorldStep, world: World, out: EdgePacketWriter): void;
}

interface FloorSensors {
  floorId: string;
  presence: ModelPresenceSensor[];
  /** Each presence sensor's index in `model.sensors` (the flat packets' sensor index). */
  presenceIndex: number[];
  /** The floor's people by room at the current instant, and each presence sensor's room slot in it. */
  rooms: RoomPeople | null;
  presenceSlot: number[];
  traffic: ModelTrafficSensor[];
  trafficIndex: number[];
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
  // The interval's packets as numbers, not objects that lived until the drain (edge-packets.ts).
  const buffer = new EdgePacketWriter();
  return {
    observe(step, world) {
      sensors.sampleInto(step, world, buffer);
    },
    drain() {
      return Promise.resolve(buffer.take());
    },
    close: () => Promise.resolve(),
  };
}

const NO_CROSSINGS: readonly DoorCrossing[] = [];

/** Sensors are grouped by floor so each floor's people are fetched once per tick. */
export function createModelSensors(model: ScenarioModel): ModelSensors {
  const doors = new Map(model.doors.map((d) => [d.id, d]));
  const byFloor = new Map<string, FloorSensors>();
  for (const floor of model.floors)
    byFloor.set(floor.id, {
      floorId: floor.id,
      presence: [],
      presenceIndex: [],
      rooms: null,
      presenceSlot: [],
      traffic: [],
      trafficIndex: [],
    });
  model.sensors.forEach((s, i) => {
    const group = byFloor.get(s.floorId);
    if (!group) return;
    if (s.mode === 'presence') {
      group.presence.push(new ModelPresenceSensor(s, model.noise.presence, model.seed, model.startMs));
      group.presenceIndex.push(i);
    } else {
      const door = s.doorId === null ? undefined : doors.get(s.doorId);
      if (!door) throw new AppError(ErrorCodes.SCENARIO_INVALID, `traffic sensor ${s.name} watches no door`);
      group.traffic.push(new ModelTrafficSensor(s, door, model.noise.traffic, model.seed, model.startMs));
      group.trafficIndex.push(i);
    }
  });
  const floors = [...byFloor.values()].filter((f) => f.presence.length + f.traffic.length > 0);
  for (const f of floors) {
    const rooms = new RoomPeople(f.presence.flatMap((p) => (p.sensor.roomId === null ? [] : [p.sensor.roomId])));
    f.rooms = rooms;
    f.presenceSlot = f.presence.map((p) => rooms.slotOf(p.sensor.roomId));
  }

  // The traffic sensors of each door, so a tick's crossings reach theirs without a grouping per tick.
  const trafficOfDoor = groupBy(
    floors.flatMap((f) => f.traffic),
    (s) => s.sensor.doorId ?? '',
  );

  const sensors: ModelSensors = {
    // Objects for benches and tests, read back from the flat form the run uses: one sampling path.
    sample(step, world) {
      const w = new EdgePacketWriter();
      sensors.sampleInto(step, world, w);
      return unpackEdgePackets(w.take(), model.sensors);
    },
    sampleInto(step, world, out) {
      // Each crossing goes to its own door's sensors (in the tick's order): handing every sensor
      // the whole fleet's crossings made a tick cost traffic sensors × crossings, both growing
      // with the fleet. Each sensor draws from its own stream, so counting them before the
      // presence sensors sample changes no number.
      for (const c of step.crossings) {
        const watching = trafficOfDoor.get(c.doorId);
        if (watching) for (const s of watching) s.cross(c);
      }
      for (const f of floors) {
        if (f.presence.length > 0 && f.rooms) {
          // Each sensor reads only its room's people (grouped once per floor and tick, no
          // allocation): filtering the whole floor per sensor cost sensors × people per floor.
          const rooms = f.rooms;
          rooms.fill(world.peopleOnFloor(f.floorId));
          const people = rooms.people;
          for (let k = 0; k < f.presence.length; k++) {
            const slot = f.presenceSlot[k] as number;
            // A sensor in no room (slot -1) sees nobody: everyone on a floor is in a room.
            const from = slot < 0 ? 0 : rooms.start(slot);
            const to = slot < 0 ? 0 : rooms.end(slot);
            (f.presence[k] as ModelPresenceSensor).sampleInto(
              step.atMs,
              people,
              out,
              f.presenceIndex[k] as number,
              from,
              to,
            );
          }
        }
        for (let k = 0; k < f.traffic.length; k++) {
          const s = f.traffic[k] as ModelTrafficSensor;
          s.sampleInto(step.atMs, NO_CROSSINGS, out, f.trafficIndex[k] as number);
        }
      }
    },
  };
  return sensors;
}
