import { rngFor, type Rng } from '../core/rng.js';
import type { NetworkModel, ScenarioModel, SensorModel } from '../scenario/model.js';
import { Battery } from './battery.js';
import type { FaultTimeline } from './faults.js';
import { buildHiveMesh, route, type HiveMesh, type MeshLink, type Routing } from './topology.js';

/**
 * One hive's TSCH mesh in sim time, pure and deterministic: each frame walks from its
 * sensor to the hive hop by hop. A node transmits in its own cells of the slotframe (more
 * cells for nodes relaying more traffic); every attempt succeeds with the link's delivery
 * ratio (seeded stream per link), failed attempts are retried in the next cell up to
 * maxRetries times, then on the backup parent; a frame arriving at a full queue is dropped
 * and counted. Frames of one sensor reach the hive in the order they were sent.
 *
 * A frame's item is a number (the caller's handle on what the frame carries): frames on
 * their way are held in parallel typed arrays, no object per frame. A fleet's meshes hold one
 * to two batch intervals of frames (~1 M at 100,000 sensors); as objects they outlived the
 * young generation, were promoted, and made every mark-compact of the hive thread walk them.
 */
export interface MeshArrival<T extends number = number> {
  readonly item: T;
  readonly sensorId: string;
  readonly sentAtMs: number;
  readonly arrivedAtMs: number;
  readonly hops: number;
}

export interface MeshCounters {
  /** Frames handed to the mesh by their sensors. */
  sent: number;
  delivered: number;
  /** Retries on every parent exhausted, or no route. */
  dropped: number;
  queueOverflow: number;
  attempts: number;
  /** Preferred-parent changes after a fault (rejoins). */
  rejoins: number;
  /** Copies received again because a per-hop ack was lost (dropped by mesh_seq, never forwarded). */
  duplicates: number;
}

/** Slotframes a node listens for enhanced beacons before it has joined, per hop. */
const JOIN_SLOTFRAMES_PER_HOP = 3;
/** A node gets this many transmit cells per slotframe per frame source it carries. */
const CELLS_PER_SOURCE = 4;
const NO_PARENTS: readonly MeshLink[] = [];

export class MeshSim<T extends number = number> {
  readonly mesh: HiveMesh;
  readonly counters: MeshCounters = {
    sent: 0,
    delivered: 0,
    dropped: 0,
    queueOverflow: 0,
    attempts: 0,
    rejoins: 0,
    duplicates: 0,
  };
  readonly batteries = new Map<string, Battery>();
  readonly #p: NetworkModel['mesh'];
  readonly #faults: FaultTimeline;
  readonly #seed: number;
  readonly #startMs: number;
  readonly #routings = new Map<string, Routing>();
  readonly #busy: number[];
  readonly #queues: number[][];
  /** Per node: when its last frame reached the hive (frames of one sensor arrive in send order). */
  readonly #lastArrival: Float64Array;
  // Keyed by from × nodes + to: a number, not a `${from}>${to}` string built per transmission.
  readonly #rngs = new Map<number, Rng>();
  readonly #linkStats = new Map<number, { tries: number; ok: number }>();
  readonly #overflowsBy = new Map<string, number>();
  #preferred: number[] = [];
  /** The routing whose parents #preferred holds: the same routing again changes no parent. */
  #notedRouting: Routing | null = null;
  /** Each node's battery by index in `mesh.nodes` (the hive's, at 0, has none): looked up per hop. */
  readonly #batteryOf: Array<Battery | undefined>;
  /** Where `#forward` put the frame: the next hop, and when it got the frame. */
  #nextTo = 0;
  #nextAt = 0;
  /** Frames on their way to the hive, in send order: node, send and arrival instants, hops, item. */
  #pending = new PendingFrames();

  constructor(model: ScenarioModel, hiveId: string, params: NetworkModel['mesh'], faults: FaultTimeline) {
    this.#p = params;
    this.#faults = faults;
    this.#seed = model.seed;
    this.#startMs = model.startMs;
    this.mesh = buildHiveMesh(model, hiveId, params);
    this.#busy = this.mesh.nodes.map(() => model.startMs);
    this.#queues = this.mesh.nodes.map(() => []);
    this.#lastArrival = new Float64Array(this.mesh.nodes.length);
    for (const n of this.mesh.nodes.slice(1)) this.batteries.set(n.id, new Battery(params.batteryMah, model.startMs));
    for (const d of faults.drains) for (const id of d.sensorIds) this.batteries.get(id)?.drainOver(d.from, d.to);
    this.#batteryOf = this.mesh.nodes.map((n) => this.batteries.get(n.id));
    this.#notedRouting = this.routingAt(model.startMs);
    this.#preferred = this.#notedRouting.parents.map((p) => p[0]?.to ?? -1);
  }

  get slotframeMs(): number {
    return this.#p.slotframeSlots * this.#p.slotMs;
  }

  routingAt(t: number): Routing {
    // Per frame and per transmit cell: without offline faults the key is always the empty set's.
    const down = this.#faults.anyOffline ? this.#faults.offlineAt(t) : null;
    const key = down ? [...down].sort().join(',') : '';
    let r = this.#routings.get(key);
    if (!r) {
      r = route(this.mesh, down ?? new Set());
      this.#routings.set(key, r);
    }
    return r;
  }

  /** Sends one frame from `sensor` at `t`; returns false when it was dropped (counted). */
  send(sensor: SensorModel, t: number, item: T): boolean {
    return this.sendFrom(this.#index(sensor.id), t, item);
  }

  /** The same as `send`, from the sensor at `start` in `mesh.nodes` (`mesh.index`): no lookup by id per frame. */
  sendFrom(start: number, t: number, item: T): boolean {
    const sensor = this.mesh.nodes[start];
    if (sensor === undefined || start === 0)
      throw new RangeError(`no sensor #${start} in the mesh of hive ${this.mesh.hiveId}`);
    this.counters.sent++;
    const routing = this.routingAt(t);
    this.#noteParents(routing);
    let time = Math.max(t, this.#joinedAt(sensor.id, start, routing, t));
    let node = start;
    let hops = 0;
    while (node !== 0) {
      if (!this.#enqueue(node, time)) return this.#drop('queueOverflow', sensor.id);
      if (!this.#forward(node, time, routing.parents[node] ?? NO_PARENTS)) return this.#drop('dropped');
      node = this.#nextTo;
      time = this.#nextAt;
      hops++;
    }
    time = this.#afterHiveReboot(time);
    const arrivedAtMs = Math.max(time, this.#lastArrival[start]!);
    this.#lastArrival[start] = arrivedAtMs;
    this.counters.delivered++;
    this.#pending.push(start, t, arrivedAtMs, hops, item);
    return true;
  }

  /** Frames that reached the hive by `t`, in arrival order (ties: send order). */
  takeArrived(t: number): Array<MeshArrival<T>> {
    const out: Array<MeshArrival<T>> = [];
    this.takeArrivedEach(t, (item, node, sentAtMs, arrivedAtMs, hops) =>
      out.push({ item, sensorId: this.mesh.nodes[node]!.id, sentAtMs, arrivedAtMs, hops }),
    );
    return out;
  }

  /**
   * The same frames, visited in the same order without an object each: `node` is the sending
   * sensor's index in `mesh.nodes`. `visit` must not send on this mesh.
   */
  takeArrivedEach(
    t: number,
    visit: (item: T, node: number, sentAtMs: number, arrivedAtMs: number, hops: number) => void,
  ): number {
    const p = this.#pending;
    const n = p.takeDue(t);
    const order = p.order;
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      visit(p.item[i] as T, p.node[i]!, p.sent[i]!, p.arrived[i]!, p.hops[i]!);
    }
    p.dropDue(t);
    return n;
  }

  get inFlight(): number {
    return this.#pending.length;
  }

  /** Preferred-parent link stats of a sensor: [rssi, pdr over the attempts so far]. */
  linkQuality(
    sensorId: string,
    t: number,
  ): { parent: string; rssi: number; pdr: number; hops: number; overflows: number } {
    const i = this.#index(sensorId);
    const routing = this.routingAt(t);
    const p = routing.parents[i]?.[0];
    const s = p ? this.#linkStats.get(this.#linkKey(i, p.to)) : undefined;
    return {
      parent: p ? this.mesh.nodes[p.to]!.id : '',
      rssi: p ? Math.round(p.rssi) : 0,
      pdr: s && s.tries > 0 ? s.ok / s.tries : (p?.pdr ?? 0),
      hops: Number.isFinite(routing.hops[i]) ? routing.hops[i]! : 0,
      overflows: this.#overflowsBy.get(sensorId) ?? 0,
    };
  }

  #index(sensorId: string): number {
    const i = this.mesh.index.get(sensorId);
    if (i === undefined) throw new RangeError(`sensor ${sensorId} is not in the mesh of hive ${this.mesh.hiveId}`);
    return i;
  }

  #drop(kind: 'dropped' | 'queueOverflow', sensorId?: string): false {
    this.counters[kind]++;
    if (sensorId !== undefined) this.#overflowsBy.set(sensorId, (this.#overflowsBy.get(sensorId) ?? 0) + 1);
    return false;
  }

  /** Join on boot and rejoin after an offline period: frames wait until the node has joined. */
  #joinedAt(sensorId: string, node: number, routing: Routing, t: number): number {
    const boot = this.#faults.lastBootAfterOffline(sensorId, t) ?? this.#startMs;
    const hops = routing.hops[node] ?? 1;
    return boot + JOIN_SLOTFRAMES_PER_HOP * Math.max(1, Number.isFinite(hops) ? hops : 1) * this.slotframeMs;
  }

  #noteParents(routing: Routing): void {
    // Walks every node: only when the routing changed (a fault began or ended), not per frame.
    if (routing === this.#notedRouting) return;
    this.#notedRouting = routing;
    routing.parents.forEach((p, i) => {
      const to = p[0]?.to ?? -1;
      if (to !== this.#preferred[i] && i > 0) {
        this.counters.rejoins++;
        this.#preferred[i] = to;
      }
    });
  }

  #enqueue(node: number, t: number): boolean {
    const q = this.#queues[node]!;
    while (q.length > 0 && q[0]! <= t) q.shift();
    return q.length < this.#p.queueFrames;
  }

  /**
   * Transmits from `node` (retries, then the backup parent); false when no parent got the frame,
   * else the next hop and when it got it are in `#nextTo`/`#nextAt` (per hop: no object each).
   */
  #forward(node: number, t: number, parents: readonly MeshLink[]): boolean {
    const from = this.mesh.nodes[node]!;
    const battery = this.#batteryOf[node];
    let time = Math.max(t, this.#busy[node]!);
    // The hive's radio is down while it reboots: the last hop holds its frames (and its queue fills).
    for (const l of parents) {
      if (l.to !== 0) continue;
      time = this.#afterHiveReboot(time);
      break;
    }
    let received = false;
    let acked = false;
    for (const link of parents) {
      const rng = this.#rng(node, link.to);
      const key = this.#linkKey(node, link.to);
      let stats = this.#linkStats.get(key);
      if (!stats) this.#linkStats.set(key, (stats = { tries: 0, ok: 0 }));
      for (let attempt = 0; attempt <= this.#p.maxRetries && !acked; attempt++) {
        time = this.#nextCell(node, time);
        this.counters.attempts++;
        stats.tries++;
        battery?.transmit();
        const pdr = link.pdr * (1 - this.#faults.linkLoss(from.id, time));
        if (rng.next() < pdr) {
          stats.ok++;
          this.#batteryOf[link.to]?.receive();
          // A copy already received whose ack was lost: the receiver drops it by mesh_seq.
          if (!received) {
            received = true;
            this.#nextTo = link.to;
            this.#nextAt = time + this.#p.slotMs;
          } else this.counters.duplicates++;
          // The per-hop ack crosses the same link back and can be lost too.
          acked = rng.next() < pdr;
        }
        time += this.#p.slotMs;
      }
      if (acked) break;
    }
    this.#busy[node] = time;
    this.#queues[node]!.push(time);
    return received;
  }

  /** Start of the node's next transmit cell at or after t (cells spread evenly over the slotframe). */
  #nextCell(node: number, t: number): number {
    const load = this.routingAt(t).load[node] ?? 1;
    const slots = this.#p.slotframeSlots;
    const periodSlots = Math.max(1, Math.floor(slots / Math.min(slots, CELLS_PER_SOURCE * load)));
    const offset = (node * 7) % periodSlots;
    const slot = Math.ceil((t - this.#startMs) / this.#p.slotMs);
    const k = Math.max(0, Math.ceil((slot - offset) / periodSlots));
    return this.#startMs + (offset + k * periodSlots) * this.#p.slotMs;
  }

  /** The hive's radio is down while it reboots: the last hop holds its frames until the network has re-formed. */
  #afterHiveReboot(t: number): number {
    const w = this.#faults.rebootWindow(this.mesh.hiveId, t);
    return w === null ? t : w.to + JOIN_SLOTFRAMES_PER_HOP * this.slotframeMs;
  }

  #linkKey(from: number, to: number): number {
    return from * this.mesh.nodes.length + to;
  }

  #rng(from: number, to: number): Rng {
    const key = this.#linkKey(from, to);
    let r = this.#rngs.get(key);
    if (!r) {
      r = rngFor(this.#seed, `link:${this.mesh.nodes[from]!.id}>${this.mesh.nodes[to]!.id}`);
      this.#rngs.set(key, r);
    }
    return r;
  }
}

/** Frames on their way to a hive, in send order, as parallel typed arrays grown by doubling. */
class PendingFrames {
  node = new Int32Array(64);
  sent = new Float64Array(64);
  arrived = new Float64Array(64);
  hops = new Int32Array(64);
  item = new Float64Array(64);
  /** The due frames' indices in arrival order (ties: send order), after `takeDue`. */
  order = new Int32Array(64);
  length = 0;

  push(node: number, sentAtMs: number, arrivedAtMs: number, hops: number, item: number): void {
    if (this.length === this.node.length) this.#grow();
    const i = this.length++;
    this.node[i] = node;
    this.sent[i] = sentAtMs;
    this.arrived[i] = arrivedAtMs;
    this.hops[i] = hops;
    this.item[i] = item;
  }

  /** Puts the indices of the frames arrived by `t` in `order`, sorted; returns how many. */
  takeDue(t: number): number {
    let n = 0;
    const arrived = this.arrived;
    for (let i = 0; i < this.length; i++) if (arrived[i]! <= t) this.order[n++] = i;
    // By arrival, then send order: the order a stable sort of the frames by arrival gives.
    this.order.subarray(0, n).sort((a, b) => arrived[a]! - arrived[b]! || a - b);
    return n;
  }

  /** Forgets the frames arrived by `t`; the others keep their send order. */
  dropDue(t: number): void {
    let w = 0;
    for (let i = 0; i < this.length; i++) {
      if (this.arrived[i]! <= t) continue;
      if (w !== i) {
        this.node[w] = this.node[i]!;
        this.sent[w] = this.sent[i]!;
        this.arrived[w] = this.arrived[i]!;
        this.hops[w] = this.hops[i]!;
        this.item[w] = this.item[i]!;
      }
      w++;
    }
    this.length = w;
  }

  #grow(): void {
    const size = this.node.length * 2;
    const grow = <A extends Int32Array | Float64Array>(a: A, make: (n: number) => A): A => {
      const b = make(size);
      b.set(a);
      return b;
    };
    this.node = grow(this.node, (k) => new Int32Array(k));
    this.sent = grow(this.sent, (k) => new Float64Array(k));
    this.arrived = grow(this.arrived, (k) => new Float64Array(k));
    this.hops = grow(this.hops, (k) => new Int32Array(k));
    this.item = grow(this.item, (k) => new Float64Array(k));
    this.order = new Int32Array(size);
  }
}
