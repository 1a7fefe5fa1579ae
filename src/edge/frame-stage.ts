import { footprintTransform, type FootprintTransform } from '../core/footprint.js';
import { groupBy } from '../core/group-by.js';
import { rngFor } from '../core/rng.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import type { PersonState, World } from '../sim/types.js';
import type { BatchOutput, SensorBatch } from './frame/kernel.js';
import { BODY, buildSpec, initialState, magnification, PARALLAX, type FrameSpec } from './frame/spec.js';
import { PERSON_STRIDE, POSTURE_CODE } from './frame/synth.js';
import { inThreadRunner, type FrameTask, type TaskRunner } from './frame/task.js';
import { EdgePacketWriter } from './edge-packets.js';
import type { InView } from './accuracy.js';
import type { EdgeStage } from './stage.js';

/**
 * The edge stage at `--fidelity frame`. Every tick, each sensor's view of the world (the
 * people it could see, in its own metres) is appended to a per-sensor buffer; at each drain
 * the buffers become tasks for the runner (a Piscina pool, or this thread), which
 * synthesises and detects every frame of the interval and moves the sensors' state back.
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
  state: ArrayBuffer;
  ticks: number[];
  offsets: number[];
  ids: number[];
  people: number[];
  /** The last tick's people, carried into the next batch for interpolation. */
  prev: { t: number; ids: number[]; people: number[] } | null;
}

export interface FrameStageOptions {
  /** Worker threads; 0 runs the kernel in this thread. */
  workers: number;
  /** Builds the pool runner (injected so only the adapter imports piscina). */
  poolRunner?: (workers: number) => TaskRunner;
}

export function createFrameEdgeStage(model: ScenarioModel, opts: FrameStageOptions): EdgeStage {
  const runner = opts.workers > 0 && opts.poolRunner ? opts.poolRunner(opts.workers) : inThreadRunner();
  const sensors = model.sensors.map((s) => frameSensor(model, s));
  // One pass, not a scan of the fleet per floor (floors × sensors at start-up).
  const byFloor = groupBy(sensors, (s) => s.model.floorId);
  const people = personTable(model.seed);
  // One writer for the run: a drain's buffer, handed back by the delivery (EdgePackets.release), takes a later drain's packets.
  const out = new EdgePacketWriter();
  return {
    observe(step, world: World) {
      for (const [floorId, list] of byFloor) {
        const onFloor = world.peopleOnFloor(floorId);
        for (const s of list) record(s, step.atMs, onFloor, people);
      }
    },
    async drain() {
      const members: number[][] = [];
      const results = await runner.run(buildTasks(sensors, sensorsPerTask(sensors.length, opts.workers), members));
      const reports: Report[] = [];
      results.forEach((r, ti) => {
        const taskMembers = members[ti] as number[];
        taskMembers.forEach((si, k) => {
          const s = sensors[si] as FrameSensor;
          s.state = r.states[k] as ArrayBuffer;
          reportsOf(s, si, r.outputs[k] as BatchOutput, reports);
        });
      });
      reports.sort((a, b) => a.t - b.t || a.order - b.order);
      for (const r of reports) writeReport(sensors[r.order] as FrameSensor, r, out);
      return out.take();
    },
    close: () => runner.close(),
  };
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
  const door = s.doorId === null ? undefined : doorsOf(model).get(s.doorId);
  const rooms = new Set<string | null>(s.mode === 'traffic' && door ? [door.fromRoomId, door.toRoomId] : [s.roomId]);
  return {
    model: s,
    spec,
    view: footprintTransform(s),
    rooms,
    state: initialState(model, s, spec).buffer,
    ticks: [],
    offsets: [],
    ids: [],
    people: [],
    prev: null,
  };
}

const doorIndexes = new WeakMap<ScenarioModel, ReadonlyMap<string, ScenarioModel['doors'][number]>>();

/** The model's doors by id, built once per model (a search of every door per traffic sensor grew with the fleet's square). */
function doorsOf(model: ScenarioModel): ReadonlyMap<string, ScenarioModel['doors'][number]> {
  let doors = doorIndexes.get(model);
  if (!doors) doorIndexes.set(model, (doors = new Map(model.doors.map((d) => [d.id, d] as const))));
  return doors;
}

/**
 * A person is in a frame sensor's view when their shoulders are: seen at their height through
 * the pinhole, within the field of view (parallax shrinks the floor footprint by H/(H − h)).
 */
export const inViewAtShoulders: InView = (sensor, view, p) => {
  if (!PARALLAX) return view.sees(p.x, p.y);
  const m = magnification(sensor.height, p.posture === 'sitting' ? BODY.seatedShoulderM : BODY.standingShoulderM);
  const [lx, ly] = view.toLocal(p.x, p.y);
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

/** Appends what the sensor sees at this tick to its buffer. */
export function record(s: FrameSensor, atMs: number, onFloor: readonly PersonState[], people: ReturnType<typeof personTable>): void {
  s.ticks.push(atMs);
  s.offsets.push(s.ids.length);
  const side = s.view.side;
  const m = EDGE_MARGIN_M / side;
  for (const p of onFloor) {
    if (!s.rooms.has(p.roomId)) continue;
    const [lx, ly] = s.view.toLocal(p.x, p.y);
    if (lx < -m || lx > 1 + m || ly < -m || ly > 1 + m) continue;
    const e = people(p.id);
    s.ids.push(e.index);
    s.people.push(lx * side, ly * side, POSTURE_CODE[p.posture], e.surfaceC);
  }
}

/**
 * Groups sensors into tasks of `perTask` (grouping never changes a result: sensors are
 * independent), lazily: the pool runs a task while the next is built. The sensor indices of
 * task k are appended to `members` as task k is yielded.
 */
function* buildTasks(sensors: FrameSensor[], perTask: number, members: number[][]): Generator<FrameTask> {
  let task: FrameTask = { specs: [], states: [], batches: [] };
  let taskMembers: number[] = [];
  for (let si = 0; si < sensors.length; si++) {
    const s = sensors[si] as FrameSensor;
    if (s.ticks.length === 0) continue;
    taskMembers.push(si);
    task.specs.push(s.spec);
    task.states.push(s.state);
    task.batches.push(takeBatch(s));
    if (taskMembers.length < perTask) continue;
    members.push(taskMembers);
    yield task;
    task = { specs: [], states: [], batches: [] };
    taskMembers = [];
  }
  if (taskMembers.length === 0) return;
  members.push(taskMembers);
  yield task;
}

/** The sensor's buffered ticks as typed arrays, with the previous tick in front. */
export function takeBatch(s: FrameSensor): SensorBatch {
  const first = s.ticks[0] as number;
  const prev = s.prev ?? { t: first - 1, ids: s.ids.slice(0, s.offsets[1] ?? s.ids.length), people: s.people.slice(0, PERSON_STRIDE * (s.offsets[1] ?? s.ids.length)) };
  const n = s.ticks.length;
  const ticks = new Float64Array(n + 1);
  ticks[0] = prev.t;
  ticks.set(s.ticks, 1);
  const offsets = new Int32Array(n + 2);
  for (let k = 0; k < n; k++) offsets[k + 1] = prev.ids.length + (s.offsets[k] as number);
  offsets[n + 1] = prev.ids.length + s.ids.length;
  const ids = new Int32Array(prev.ids.length + s.ids.length);
  ids.set(prev.ids);
  ids.set(s.ids, prev.ids.length);
  const people = new Float32Array(prev.people.length + s.people.length);
  people.set(prev.people);
  people.set(s.people, prev.people.length);
  const lastStart = s.offsets[n - 1] as number;
  s.prev = { t: s.ticks[n - 1] as number, ids: s.ids.slice(lastStart), people: s.people.slice(lastStart * PERSON_STRIDE) };
  s.ticks = [];
  s.offsets = [];
  s.ids = [];
  s.people = [];
  return { ticks, offsets, ids, people };
}

/** One report in a sensor's batch output: its instant, the sensor's index and where it starts in the output. */
interface Report {
  t: number;
  order: number;
  out: BatchOutput;
  at: number;
}

function reportsOf(s: FrameSensor, order: number, out: BatchOutput, into: Report[]): void {
  for (let i = 0; i < out.length; ) {
    into.push({ t: out[i] as number, order, out, at: i });
    i += s.spec.mode === 1 ? 3 : 2 + 2 * (out[i + 1] as number);
  }
}

/** A report in the edge's flat packets (edge-packets.ts). */
function writeReport(s: FrameSensor, r: Report, w: EdgePacketWriter): void {
  const out = r.out;
  const i = r.at;
  if (s.spec.mode === 1) {
    w.traffic(r.order, r.t, s.model.reportIntervalMs, out[i + 1] as number, out[i + 2] as number);
    return;
  }
  const n = out[i + 1] as number;
  w.presence(r.order, r.t);
  for (let d = 0; d < n; d++) w.detection(out[i + 2 + 2 * d] as number, out[i + 3 + 2 * d] as number);
  w.end();
}
