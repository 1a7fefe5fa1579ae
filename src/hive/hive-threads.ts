import { capHeapGrowth } from '../core/heap-growth.js';
import { startModuleWorker, workerCalls } from '../core/worker-calls.js';
import { EdgePacketWriter, nextEdgePacket, type EdgePackets } from '../edge/edge-packets.js';
import type { FloorModel, RoomModel, ScenarioModel, SensorModel } from '../scenario/model.js';
import type { HiveGroupReport } from './delivery-report.js';
import type { GroupFlush } from './hive-group.js';
import type {
  HiveThreadConnect,
  HiveThreadInit,
  HiveThreadPost,
  HiveThreadRequest,
  HiveThreadReturned,
} from './hive-thread-messages.js';
import type { HiveGroups } from './mesh-delivery.js';

/**
 * The hives spread over worker threads (`--hive-threads n`): each thread simulates a
 * contiguous share of the scenario's hives — meshes, batching, store-and-forward, MQTT links —
 * so the run's own thread keeps only the world and the edge. Each flush hands a thread its
 * sensors' packets of the interval in one transferred buffer; the threads flush side by side,
 * as the hives of one thread do. A hive's behaviour depends only on its own packets and the
 * flush instants (hive-group.ts), and the report is assembled in scenario order, so results
 * are byte-identical to hives simulated in the run's thread.
 */
export interface HiveThreadOptions {
  threads: number;
  ackTimeoutMs: number;
}

/** Hive threads started before the broker is known: they build their meshes meanwhile. */
export interface HiveThreadsStarting {
  /** Logs every thread's hives in to the broker; resolves once all have (the threads are then ready for the loop). */
  connect(brokerUrl: string): Promise<HiveGroups>;
  /** Ends threads that will not be connected (the run's start failed elsewhere). */
  abandon(): Promise<void>;
}

type Request = HiveThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

interface HiveThread {
  call<T>(r: Request): Promise<T>;
  /** A message that has no answer (a failure surfaces at the next call). */
  post(m: HiveThreadPost, transfer: ArrayBuffer[]): void;
  /** `listener` gets each submit's buffer the thread hands back (HiveThreadReturned): the thread no longer reads it. */
  onReturned(listener: (packets: Float64Array) => void): void;
  terminate(): Promise<void>;
}

/**
 * A run with hive threads has a heap per thread (the run's, the platform's, each hive
 * thread's): their growth is capped at 2× the live set (heap-growth.ts). fleet.yaml, 3
 * simulated minutes, model fidelity: peak RSS 1.79–1.82 → 1.57 GB, loop CPU within the noise of uncapped runs (53.5–62.6 s uncapped, 57.5 s capped).
 */
const HIVE_RUN_HEAP_GROWTH_PERCENT = 100;

/**
 * Starts the hive threads now, without a broker: each loads its modules and builds its
 * hives' meshes while the caller starts the platform; `connect` then only logs the hives in.
 */
export function spawnHiveThreads(model: ScenarioModel, opts: HiveThreadOptions): HiveThreadsStarting {
  capHeapGrowth(HIVE_RUN_HEAP_GROWTH_PERCENT);
  const shares = shareHives(model, opts.threads);
  const starting = shares.map((hiveIds) =>
    spawnThread({ model: hiveShareModel(model, hiveIds), hiveIds, ackTimeoutMs: opts.ackTimeoutMs }),
  );
  return {
    async connect(brokerUrl) {
      const started = await Promise.allSettled(starting.map((t) => t.connect(brokerUrl)));
      const threads = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        await Promise.all(threads.map((t) => t.terminate()));
        throw failed.reason;
      }
      return hiveGroupsOf(model, shares, threads);
    },
    abandon: async () => {
      await Promise.all(starting.map((t) => t.terminate()));
    },
  };
}

/** A packet's route: its thread times this plus its sensor's index in that thread's sensors (a scenario has far fewer sensors). */
const ROUTE_THREAD = 2 ** 26;

function hiveGroupsOf(model: ScenarioModel, shares: readonly string[][], threads: readonly HiveThread[]): HiveGroups {
  // Which thread each packet's sensor has, and its index in that thread's sensors (its share
  // model's, in scenario order): the hand-off writes numbers, not ids.
  const threadOfHive = new Map(shares.flatMap((ids, k) => ids.map((id) => [id, k] as const)));
  // Per sensor index in model.sensors (the edge's flat packets' index), one number (thread ×
  // ROUTE_THREAD + index; -1: no hive thread has it): the lookup is per packet, ~1 M an interval
  // at 100,000 sensors, so an array read, not a `Map` by id.
  const sensorsSoFar = shares.map(() => 0);
  const route = new Float64Array(model.sensors.length).fill(-1);
  model.sensors.forEach((s, i) => {
    const thread = threadOfHive.get(s.hiveId);
    if (thread === undefined) return;
    route[i] = thread * ROUTE_THREAD + (sensorsSoFar[thread] as number);
    sensorsSoFar[thread] = (sensorsSoFar[thread] as number) + 1;
  });
  // A thread's submit buffer is transferred to it (the run's thread cannot touch it then) and
  // handed back once its packets have left that thread's meshes: its writer fills it again.
  const writers = threads.map(() => new EdgePacketWriter());
  threads.forEach((t, k) =>
    t.onReturned((packets) =>
      (writers[k] as EdgePacketWriter).recycle(new Float64Array(packets.buffer as ArrayBuffer)),
    ),
  );
  return {
    submit(packets: EdgePackets): void {
      const d = packets.data;
      for (let at = 0; at < d.length; at = nextEdgePacket(d, at)) {
        const r = route[d[at] as number];
        if (r === undefined || r < 0)
          throw new Error(`no hive route for sensor ${model.sensors[d[at] as number]?.id ?? `#${d[at]}`}`);
        const thread = Math.floor(r / ROUTE_THREAD);
        (writers[thread] as EdgePacketWriter).copy(d, at, r - thread * ROUTE_THREAD);
      }
      // Copied into the threads' buffers: the edge's writer may fill it again.
      packets.release();
      threads.forEach((t, k) => {
        const buf = (writers[k] as EdgePacketWriter).take().data;
        t.post({ op: 'submit', packets: buf }, [buf.buffer as ArrayBuffer]);
      });
    },
    async flush(atMs: number): Promise<GroupFlush> {
      const results = await Promise.all(threads.map((t) => t.call<GroupFlush>({ op: 'flush', atMs })));
      return results.reduce(
        (a, r) => ({
          published: a.published + r.published,
          submitted: a.submitted + r.submitted,
          empty: a.empty && r.empty,
        }),
        { published: 0, submitted: 0, empty: true },
      );
    },
    report: (nowMs) => Promise.all(threads.map((t) => t.call<HiveGroupReport>({ op: 'report', nowMs }))),
    async close() {
      await Promise.all(
        threads.map(async (t) => {
          await t.call({ op: 'close' }).catch(() => undefined);
          await t.terminate();
        }),
      );
    },
  };
}

/** Contiguous shares of the hives in scenario order, balanced by sensor count (a hive's work grows with its sensors). */
export function shareHives(model: ScenarioModel, threads: number): string[][] {
  const n = Math.max(1, Math.min(threads, model.hives.length));
  const sensorsOf = new Map<string, number>();
  for (const s of model.sensors) sensorsOf.set(s.hiveId, (sensorsOf.get(s.hiveId) ?? 0) + 1);
  const total = model.hives.reduce((a, h) => a + (sensorsOf.get(h.id) ?? 0) + 1, 0);
  const shares: string[][] = Array.from({ length: n }, () => []);
  let done = 0;
  for (const h of model.hives) {
    // The share whose slice of the cumulative work this hive starts in.
    const k = Math.min(n - 1, Math.floor((done * n) / total));
    (shares[k] as string[]).push(h.id);
    done += (sensorsOf.get(h.id) ?? 0) + 1;
  }
  return shares.filter((s) => s.length > 0);
}

/**
 * What a hive thread needs of the scenario, and no more: its hives, their sensors (scenario
 * order), the floors and rooms their meshes are laid out on (walls attenuate links), the
 * faults, the network and the run's times. A fleet's people, schedules, doors, zones, the
 * platform's organisation and every sensor's name and file pointer stay in the run's thread:
 * the whole model, cloned into each thread, was ~21 MB of a 30,000-sensor fleet's heap there.
 */
export function hiveShareModel(model: ScenarioModel, hiveIds: readonly string[]): ScenarioModel {
  const hiveSet = new Set(hiveIds);
  const hives = model.hives.filter((h) => hiveSet.has(h.id));
  const sensors = model.sensors
    .filter((s) => hiveSet.has(s.hiveId))
    .map((s): SensorModel => ({ ...s, name: '', roomId: null, zoneId: null, doorId: null, src: '' }));
  const floorIds = new Set([...hives.map((h) => h.floorId), ...sensors.map((s) => s.floorId)]);
  const floors = model.floors
    .filter((f) => floorIds.has(f.id))
    .map((f): FloorModel => ({
      id: f.id,
      name: '',
      siteId: f.siteId,
      buildingId: f.buildingId,
      level: f.level,
      customId: null,
      outline: [],
      roomIds: [],
      zoneIds: [],
      doorIds: [],
      hiveIds: [],
      sensorIds: [],
      src: '',
    }));
  const rooms = model.rooms
    .filter((r) => floorIds.has(r.floorId))
    .map((r): RoomModel => ({
      id: r.id,
      name: '',
      floorId: r.floorId,
      customId: null,
      capacity: null,
      polygon: r.polygon,
      src: '',
    }));
  const { organisations: _o, thermal: _t, webhooks: _w, webhookAllow: _a, expect: _e, ...rest } = model;
  return {
    ...rest,
    org: { id: model.org.id, name: '' },
    sites: [],
    buildings: [],
    floors,
    rooms,
    zones: [],
    doors: [],
    hives,
    sensors,
    populations: [],
    meetings: [],
    users: [],
    clients: [],
  };
}

function spawnThread(init: HiveThreadInit): {
  connect(brokerUrl: string): Promise<HiveThread>;
  terminate(): Promise<void>;
} {
  const worker = startModuleWorker(import.meta.url, 'hive-worker', init);
  const ready = workerCalls<Request, { kind: 'ready' }>(worker, { what: 'hive thread', fallback: null });
  // Awaited by connect; a thread that fails before then (or is abandoned) must not be an unhandled rejection.
  ready.catch(() => undefined);
  const terminate = async (): Promise<void> => {
    await worker.terminate();
  };
  return {
    async connect(brokerUrl) {
      worker.postMessage({ op: 'connect', brokerUrl } satisfies HiveThreadConnect);
      const { calls } = await ready;
      return {
        call: (r) => calls.call(r),
        post: (m, transfer) => calls.post(m, transfer),
        onReturned(listener) {
          // Not a reply to a call (no id): workerCalls passes it by.
          worker.on('message', (m: HiveThreadReturned | { kind: string }) => {
            if (m.kind === 'returned') listener((m as HiveThreadReturned).packets);
          });
        },
        terminate,
      };
    },
    terminate,
  };
}
