import { footprintTransform, type FootprintTransform } from '../core/footprint.js';
import { groupBy } from '../core/group-by.js';
import { rngFor } from '../core/rng.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import type { PersonState, World } from '../sim/types.js';
import type { SensorBatch } from './frame/kernel.js';
import { PackedTaskSlot, type PackedResult, type PackedTask } from './frame/packed.js';
import { FrameRecorder } from './frame/recorder.js';
import { inThreadRunner, type TaskRunner } from './frame/runner.js';
import { BODY, buildSpec, initialState, magnification, PARALLAX, type FrameSpec } from './frame/spec.js';
import { PERSON_STRIDE, POSTURE_CODE } from './frame/synth.js';
import { EdgePacketWriter } from './edge-packets.js';
import type { InView } from './accuracy.js';
import type { EdgeStage } from './stage.js';

/**
 * The edge stage at `--fidelity frame`. Every tick, each sensor's view of the world (the
 * people it could see, in its own metres) is recorded (frame/recorder.ts); at each drain the
 * interval's record is packed into the tasks' buffers, kept from interval to interval with the
 * sensors' states in them (frame/packed.ts, `PackedTaskSlot`), for the runner (a Piscina pool,
 * or this thread), which synthesises and detects every frame of the interval; the reports come
 * back as one flat array per task and are written out in (instant, sensor) order. Nothing per
 * sensor is allocated per tick or interval on this thread (bench/README.md, "session 7,
 * frame-garbage").
 */

/** People this far outside the footprint are kept: they warm its edge pixels, and someone walking in between two ticks (≤ 1.5 m) is interpolated in from outside rather than popping up inside. */
const EDGE_MARGIN_M = 1.6;
/** Sensors per task: at least this many (enough frames to amortise the dispatch), at most 64 (sensorsPerTask). */
const MIN_SENSORS_PER_TASK = 8;
const MAX_SENSORS_PER_TASK = 64;

/** One sensor's view of the world and its state (exported for the frames viewer). */
export interface FrameSensor {
  readonly model: SensorModel;
  readonly spec: FrameSpec;
  readonly view: FootprintTransform;
  /** Rooms whose people it sees (walls block thermal radiation). */
  readonly rooms: ReadonlySet<string | null>;
  /** The state it starts from (the stage then keeps it in its task's buffer). */
  state: ArrayBuffer;
}

export interface FrameStageOptions {
  /** Worker threads; 0 runs the kernel in this thread. */
  workers: number;
  /** Builds the pool runner (injected so only the adapter imports piscina). */
  poolRunner?: (workers: number) => TaskRunner;
}

export function createFrameEdgeStage(model: ScenarioModel, opts: FrameStageOptions): EdgeStage {
  const runner = opts.workers > 0 && opts.poolRunner ? opts.poolRunner(opts.workers) : inThreadRunner();
  const sensors = model.sensors.map((s) => stageSensor(model, s));
  // One pass, not a scan of the fleet per floor (floors × sensors at start-up); indices, as the recorder and packets number sensors.
  const byFloor = groupBy(
    sensors.map((_, i) => i),
    (i) => (sensors[i] as StageSensor).model.floorId,
  );
  const people = personTable(model.seed);
  const rec = new FrameRecorder(sensors.length);
  const perTask = sensorsPerTask(sensors.length, opts.workers);
  // Each task's buffer with its sensors' specs and initial states, built at start-up as the states were.
  const slots = taskSlots(model, sensors, perTask);
  const reports = new ReportCursors(sensors.length);
  // One writer for the run: a drain's buffer, handed back by the delivery (EdgePackets.release), takes a later drain's packets.
  const out = new EdgePacketWriter();
  return {
    observe(step, world: World) {
      rec.tick(step.atMs);
      for (const [floorId, list] of byFloor) {
        const onFloor = world.peopleOnFloor(floorId);
        for (const si of list) record(rec, si, sensors[si] as StageSensor, onFloor, people);
      }
    },
    async drain() {
      const results = rec.ticks === 0 ? [] : await runner.runPacked(packTasks(sensors, rec, slots, perTask));
      rec.endInterval();
      reports.write(sensors, results, perTask, out);
      return out.take();
    },
    close: () => runner.close(),
  };
}

/** A sensor as the stage keeps it: its state lives in its task's buffer once the first interval is packed. */
interface StageSensor {
  readonly model: SensorModel;
  readonly spec: FrameSpec;
  readonly view: FootprintTransform;
  readonly rooms: ReadonlySet<string | null>;
}

function stageSensor(model: ScenarioModel, s: SensorModel): StageSensor {
  return { model: s, spec: buildSpec(model, s), view: footprintTransform(s), rooms: roomsSeen(model, s) };
}

/** One slot per task of `perTask` sensors in sensor order, holding their specs and initial states. */
function taskSlots(model: ScenarioModel, sensors: readonly StageSensor[], perTask: number): PackedTaskSlot[] {
  const slots: PackedTaskSlot[] = [];
  for (let first = 0; first < sensors.length; first += perTask) {
    const n = Math.min(perTask, sensors.length - first);
    const slot = new PackedTaskSlot();
    slot.begin(n);
    for (let i = 0; i < n; i++) slot.placeFixed(i, (sensors[first + i] as StageSensor).spec);
    slot.allocate();
    for (let i = 0; i < n; i++) {
      const s = sensors[first + i] as StageSensor;
      slot.writeFixed(i, s.spec, new Uint8Array(initialState(model, s.model, s.spec).buffer));
    }
    slot.settle();
    slots.push(slot);
  }
  return slots;
}

/**
 * The interval's tasks, `perTask` sensors each in sensor order, packed lazily into their
 * slots (the pool runs a task while the next is packed). Grouping never changes a result:
 * sensors are independent.
 */
function* packTasks(
  sensors: readonly StageSensor[],
  rec: FrameRecorder,
  slots: PackedTaskSlot[],
  perTask: number,
): Generator<PackedTask> {
  const ticks = rec.ticks + 1;
  for (let first = 0, t = 0; first < sensors.length; first += perTask, t++) {
    const n = Math.min(perTask, sensors.length - first);
    const slot = slots[t] as PackedTaskSlot;
    slot.begin(n);
    for (let i = 0; i < n; i++) slot.placeFixed(i, (sensors[first + i] as StageSensor).spec);
    for (let i = 0; i < n; i++) slot.placeBatch(i, ticks, rec.batchPeople(first + i));
    slot.allocate();
    for (let i = 0; i < n; i++) slot.writeBatch(i, rec, first + i);
    yield slot.task();
  }
}

/**
 * Sensors per task for a fleet and a pool size, 8…64 each: one task per worker when there
 * are several (tasks are built lazily, so each worker starts as soon as its task is built;
 * stacking two per worker ties them to the order they were built in, and the worker whose
 * second task was built while the main thread shared its core finishes last), and two for a
 * single worker (it runs the first while the second is built). Measured: bench/README.md.
 */
export function sensorsPerTask(sensors: number, workers: number): number {
  return Math.min(MAX_SENSORS_PER_TASK, Math.max(MIN_SENSORS_PER_TASK, Math.ceil(sensors / Math.max(2, workers))));
}

export function frameSensor(model: ScenarioModel, s: SensorModel): FrameSensor {
  const spec = buildSpec(model, s);
  return {
    model: s,
    spec,
    view: footprintTransform(s),
    rooms: roomsSeen(model, s),
    state: initialState(model, s, spec).buffer,
  };
}

/** The rooms whose people a sensor sees: its own, or a traffic sensor's door's two. */
function roomsSeen(model: ScenarioModel, s: SensorModel): ReadonlySet<string | null> {
  const door = s.doorId === null ? undefined : doorsOf(model).get(s.doorId);
  return new Set<string | null>(s.mode === 'traffic' && door ? [door.fromRoomId, door.toRoomId] : [s.roomId]);
}

const doorIndexes = new WeakMap<ScenarioModel, ReadonlyMap<string, ScenarioModel['doors'][number]>>();

/** The model's doors by id, built once per model (a search of every door per traffic sensor grew with the fleet's square). */
function doorsOf(model: ScenarioModel): ReadonlyMap<string, ScenarioModel['doors'][number]> {
  let doors = doorIndexes.get(model);
  if (!doors) doorIndexes.set(model, (doors = new Map(model.doors.map((d) => [d.id, d] as const))));
  return doors;
}

/** A point in sensor-local coordinates (`toLocalInto`): reused, read right after it is written. */
const local = new Float64Array(2);

/**
 * A person is in a frame sensor's view when their shoulders are: seen at their height through
 * the pinhole, within the field of view (parallax shrinks the floor footprint by H/(H − h)).
 */
export const inViewAtShoulders: InView = (sensor, view, p) => {
  if (!PARALLAX) return view.sees(p.x, p.y);
  const m = magnification(sensor.height, p.posture === 'sitting' ? BODY.seatedShoulderM : BODY.standingShoulderM);
  view.toLocalInto(p.x, p.y, local);
  const lx = local[0] as number;
  const ly = local[1] as number;
  // Normalised offset ≤ 0.5: the shoulders' centre is in view (half of them, at least).
  return Math.abs(lx - 0.5) * m <= 0.5 && Math.abs(ly - 0.5) * m <= 0.5;
};

/** Person id → small integer and surface temperature (30.5–33.5 °C, fixed per person). */
export function personTable(seed: number): (id: string) => { index: number; surfaceC: number } {
  const table = new Map<string, { index: number; surfaceC: number }>();
  return (id) => {
    let e = table.get(id);
    if (!e) table.set(id, (e = { index: table.size, surfaceC: rngFor(seed, `${id}:skin`).uniform(30.5, 33.5) }));
    return e;
  };
}

/** Records what sensor `si` sees at the recorder's current tick (`FrameRecorder.tick`). */
export function record(
  rec: FrameRecorder,
  si: number,
  s: Pick<FrameSensor, 'view' | 'rooms'>,
  onFloor: readonly PersonState[],
  people: ReturnType<typeof personTable>,
): void {
  rec.begin(si);
  const side = s.view.side;
  const m = EDGE_MARGIN_M / side;
  for (const p of onFloor) {
    if (!s.rooms.has(p.roomId)) continue;
    s.view.toLocalInto(p.x, p.y, local);
    const lx = local[0] as number;
    const ly = local[1] as number;
    if (lx < -m || lx > 1 + m || ly < -m || ly > 1 + m) continue;
    const e = people(p.id);
    rec.add(e.index, lx * side, ly * side, POSTURE_CODE[p.posture], e.surfaceC);
  }
  rec.end();
}

/** A one-sensor recorder's interval as a batch of new arrays (the frames viewer), the interval ended. */
export function takeBatch(rec: FrameRecorder): SensorBatch {
  const n = rec.batchPeople(0);
  const batch: SensorBatch = {
    ticks: new Float64Array(rec.ticks + 1),
    offsets: new Int32Array(rec.ticks + 2),
    ids: new Int32Array(n),
    people: new Float32Array(n * PERSON_STRIDE),
  };
  rec.writeBatch(0, batch.ticks, 0, batch.offsets, 0, batch.ids, 0, batch.people, 0);
  rec.endInterval();
  return batch;
}

/**
 * Writes the interval's reports out of the tasks' flat outputs (`[n, len₀…lenₙ₋₁, data…]`, each
 * sensor's reports in instant order) in (instant, sensor) order: one pass over the sensors per
 * distinct instant, each sensor's cursor in reused arrays — the order a sort of every report
 * gave, without an object per report or the sort.
 */
class ReportCursors {
  readonly #task: Int32Array;
  readonly #at: Int32Array;
  readonly #end: Int32Array;

  constructor(sensors: number) {
    this.#task = new Int32Array(sensors);
    this.#at = new Int32Array(sensors);
    this.#end = new Int32Array(sensors);
  }

  write(sensors: readonly StageSensor[], results: readonly PackedResult[], perTask: number, w: EdgePacketWriter): void {
    if (results.length === 0) return;
    const [task, at, end] = [this.#task, this.#at, this.#end];
    let next = Infinity;
    for (let t = 0; t < results.length; t++) {
      const r = results[t] as PackedResult;
      const n = r[0] as number;
      let off = 1 + n;
      for (let i = 0; i < n; i++) {
        const si = t * perTask + i;
        task[si] = t;
        at[si] = off;
        off += r[1 + i] as number;
        end[si] = off;
        if ((at[si] as number) < off) next = Math.min(next, r[at[si] as number] as number);
      }
    }
    while (next !== Infinity) {
      const instant = next;
      next = Infinity;
      for (let si = 0; si < sensors.length; si++) {
        let a = at[si] as number;
        const e = end[si] as number;
        if (a >= e) continue;
        const r = results[task[si] as number] as PackedResult;
        if (r[a] === instant) {
          a = writeReport(sensors[si] as StageSensor, si, r, a, w);
          at[si] = a;
        }
        if (a < e) next = Math.min(next, r[a] as number);
      }
    }
  }
}

/** The report at `out[i]` in the edge's flat packets (edge-packets.ts); returns where the next one starts. */
function writeReport(s: StageSensor, si: number, out: PackedResult, i: number, w: EdgePacketWriter): number {
  const t = out[i] as number;
  if (s.spec.mode === 1) {
    w.traffic(si, t, s.model.reportIntervalMs, out[i + 1] as number, out[i + 2] as number);
    return i + 3;
  }
  const n = out[i + 1] as number;
  w.presence(si, t);
  for (let d = 0; d < n; d++) w.detection(out[i + 2 + 2 * d] as number, out[i + 3 + 2 * d] as number);
  w.end();
  return i + 2 + 2 * n;
}
