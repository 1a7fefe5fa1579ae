import type { EdgePackets } from '../edge/edge-packets.js';
import { isAppError } from '../core/errors.js';
import type { Battery } from '../mesh/battery.js';
import type { FaultTimeline } from '../mesh/faults.js';
import type { NetworkModel, ScenarioModel } from '../scenario/model.js';
import { DEFAULT_NETWORK } from '../scenario/resolve-network.js';
import type { HiveGroupReport } from './delivery-report.js';
import type { Transmission } from './hive-node.js';
import { healthOf, heartbeatOf, hiveRigs, rigReport, type HiveRig, type MeshHiveEndpoint } from './hive-rig.js';
import { HeldPackets, nextPacket } from './packet-transfer.js';

/** One flush of a group: batches published, packets its sensors submitted since the last, whether mesh and buffers are empty now. */
export interface GroupFlush {
  published: number;
  submitted: number;
  empty: boolean;
}

/**
 * A group of hives simulated together — all of a run's, or one hive thread's share
 * (hive-threads.ts) — each with its sensors' TSCH mesh (MeshSim), its batching and
 * store-and-forward (HiveNode) and its real MQTT link. Hives share nothing but the pure
 * fault timeline, so what a hive does depends only on the packets its own sensors submit and
 * the flush instants, never on which group or thread it is simulated in.
 */
export interface HiveGroup {
  /**
   * The group's sensors' packets enter their meshes (every packet's sensor must belong to a
   * hive of the group; indices into the group's model's sensors). Their buffer is held, not
   * copied: `packets.release` runs once the last of them has left the meshes.
   */
  submit(packets: EdgePackets): void;
  /**
   * The same from the hand-off buffer (packet-transfer.ts; sensor indices into the group's
   * model's sensors), at most `max` packets from offset `from`; returns the offset after the
   * last one taken (`buf.length` when done). The buffer is held, not copied: once every packet
   * of it has been submitted (the call that returns `buf.length`) and the last has left the
   * meshes, `release` runs (given with the first slice; nothing here reads `buf` after it).
   */
  submitPackets(buf: Float64Array, from: number, max: number, release: () => void): number;
  /** Every hive of the group publishes what has reached it by `atMs` (side by side), each waiting for the cloud's acks. */
  flush(atMs: number): Promise<GroupFlush>;
  /** Plain data (crosses a thread boundary): each hive's ledger, latencies, mesh counters and batteries at `nowMs`. */
  report(nowMs: number): HiveGroupReport;
}

/** What the group's functions share: its hives' rigs, the per-sensor routes, the held packets and its running figures. */
interface Group {
  readonly model: ScenarioModel;
  readonly network: NetworkModel;
  readonly faults: FaultTimeline;
  readonly rigs: ReadonlyMap<string, HiveRig>;
  /** Per sensor (by index in model.sensors): its hive's rig, battery and mesh node, looked up once, not per packet. */
  readonly rigOf: ReadonlyArray<HiveRig | undefined>;
  readonly batteryOf: ReadonlyArray<Battery | undefined>;
  readonly nodeOf: Int32Array;
  readonly held: HeldPackets;
  /** Packets that reached their hive, by hops taken. */
  readonly hops: number[];
  healthKeys: number;
  lastFlushMs: number;
  /** Packets the group's sensors submitted since the last flush. */
  submitted: number;
}

export function createHiveGroup(
  model: ScenarioModel,
  hives: readonly MeshHiveEndpoint[],
  faults: FaultTimeline,
): HiveGroup {
  const g = groupOf(model, hives, faults);
  return {
    submit(packets) {
      // The edge's flat form is the hand-off buffer's (packet-transfer.ts): held as it is.
      submitPackets(g, packets.data, 0, Number.POSITIVE_INFINITY, packets.release);
    },
    submitPackets: (buf, from, max, release) => submitPackets(g, buf, from, max, release),
    flush: (atMs) => flushGroup(g, atMs),
    report: (nowMs) => ({
      hives: [...g.rigs.values()].map((r) => rigReport(r, nowMs)),
      hops: g.hops.flatMap((count, n): Array<[number, number]> => (count > 0 ? [[n, count]] : [])),
    }),
  };
}

function groupOf(model: ScenarioModel, hives: readonly MeshHiveEndpoint[], faults: FaultTimeline): Group {
  const network = model.network ?? DEFAULT_NETWORK;
  const rigs = hiveRigs(model, network, hives, faults);
  return {
    model,
    network,
    faults,
    rigs,
    rigOf: model.sensors.map((s) => rigs.get(s.hiveId)),
    batteryOf: model.sensors.map((s) => rigs.get(s.hiveId)?.mesh.batteries.get(s.id)),
    nodeOf: Int32Array.from(model.sensors, (s) => rigs.get(s.hiveId)?.mesh.mesh.index.get(s.id) ?? -1),
    held: new HeldPackets(model.sensors),
    hops: [],
    healthKeys: 0,
    lastFlushMs: model.startMs,
    submitted: 0,
  };
}

/** HiveGroup.submitPackets: each packet enters its sensor's mesh, or is counted where it stopped. */
function submitPackets(g: Group, buf: Float64Array, from: number, max: number, release: () => void): number {
  const { faults, rigOf, batteryOf, nodeOf } = g;
  const sensors = g.model.sensors;
  const hold = g.held.hold(buf, release);
  let at = from;
  for (let k = 0; k < max && at < buf.length; k++) {
    const i = buf[at] as number;
    const s = sensors[i];
    const rig = rigOf[i];
    if (!s || !rig) throw new Error(`no hive route for sensor #${i}`);
    const sensedAtMs = buf[at + 1] as number;
    const handle = hold.handle(at);
    at = nextPacket(buf, at);
    if (sensedAtMs < rig.onlineAtMs) {
      rig.ledger.notYetOnline++;
      continue;
    }
    if (faults.offlineWindow(s.id, sensedAtMs) !== null) {
      rig.ledger.offlineSuppressed++;
      continue;
    }
    g.submitted++;
    rig.ledger.generated++;
    batteryOf[i]?.sample(s.mode, s.reportIntervalMs);
    const overflowBefore = rig.mesh.counters.queueOverflow;
    if (rig.mesh.sendFrom(nodeOf[i] as number, sensedAtMs, handle)) {
      hold.sent();
      continue;
    }
    if (rig.mesh.counters.queueOverflow > overflowBefore) rig.ledger.meshQueueOverflow++;
    else rig.ledger.meshDropped++;
  }
  hold.done(at >= buf.length);
  return at;
}

/** HiveGroup.flush. */
async function flushGroup(g: Group, atMs: number): Promise<GroupFlush> {
  // Hives publish side by side (each its own batches in sequence order): the platform gets
  // every batch of the interval at once. What it computes does not depend on the order
  // batches of different hives arrive in.
  let published = 0;
  for (const n of await Promise.all(Array.from(g.rigs.values(), (rig) => flushHive(g, rig, atMs)))) published += n;
  g.lastFlushMs = atMs;
  const out = { published, submitted: g.submitted, empty: allEmpty(g.rigs) };
  g.submitted = 0;
  return out;
}

/** One hive's flush: what reached it by `atMs` enters its batches, which it publishes; then its heartbeat when due. */
async function flushHive(g: Group, rig: HiveRig, atMs: number): Promise<number> {
  // Not started yet: nothing in its mesh, no heartbeat, its link not connected (ramp.ts).
  if (atMs < rig.onlineAtMs) return 0;
  // Its first delivery online: the hives of one ramp step log in side by side (a reconnect storm).
  if (rig.endpoint.link.connect) await rig.endpoint.link.connect();
  sendHealth(g, rig, g.lastFlushMs, atMs);
  takeArrived(g, rig, atMs);
  const txs = rig.node.plan(atMs);
  let published = 0;
  for (const tx of txs) {
    if (tx.lost) continue;
    const acked = await transmit(rig, tx);
    if (acked !== null) rig.node.acked(acked);
    published++;
  }
  if (rig.node.heartbeatDue(atMs)) {
    await rig.endpoint.link.heartbeat(heartbeatOf(rig, atMs, txs));
    rig.ledger.heartbeats++;
  }
  return published;
}

/** The sensors' health reports due in (from, to] enter the mesh (each sensor at its own offset in the interval). */
function sendHealth(g: Group, rig: HiveRig, from: number, to: number): void {
  const { model, faults } = g;
  const every = g.network.mesh.healthIntervalMs;
  for (const s of rig.sensors) {
    const offset = ((rig.mesh.mesh.index.get(s.id) ?? 0) * 997) % every;
    for (
      let t = model.startMs + offset + Math.ceil((from - model.startMs - offset) / every) * every;
      t <= to;
      t += every
    ) {
      if (t <= from || t < rig.onlineAtMs || faults.offlineWindow(s.id, t) !== null) continue;
      // Before the send: the report carries the link's figures as they were when it was sent.
      const health = healthOf(rig, s, t, faults.lastBootAfterOffline(s.id, t) ?? model.startMs);
      const key = g.healthKeys++;
      if (rig.mesh.send(s, t, -1 - key)) rig.healthInFlight.set(key, health);
    }
  }
}

/** What reached the hive by `atMs`, in arrival order, encoded straight into its next batches (no object per packet). */
function takeArrived(g: Group, rig: HiveRig, atMs: number): void {
  const { held, hops } = g;
  const incoming = rig.node.incoming;
  rig.mesh.takeArrivedEach(atMs, (item, node, _sent, _arrived, n) => {
    if (item < 0) {
      const key = -1 - item;
      const health = rig.healthInFlight.get(key);
      if (!health) throw new Error(`hive ${rig.endpoint.id}: no health report #${key} in flight`);
      rig.healthInFlight.delete(key);
      rig.health.set(rig.mesh.mesh.nodes[node]!.id, health);
      return;
    }
    held.takeInto(item, incoming);
    if (n >= hops.length) for (let k = hops.length; k <= n; k++) hops.push(0);
    hops[n] = (hops[n] as number) + 1;
  });
}

async function transmit(rig: HiveRig, tx: Transmission): Promise<number | null> {
  try {
    return await rig.endpoint.link.transmit(tx, tx.payload);
  } catch (err) {
    // A real transport failure (e.g. the broker restarted under the batch): the batch stays
    // in the buffer and goes again after the ack timeout.
    if (isAppError(err, 'TIMEOUT') || isAppError(err, 'BROKER_FAILED')) return null;
    throw err;
  }
}

function allEmpty(rigs: ReadonlyMap<string, HiveRig>): boolean {
  for (const r of rigs.values()) if (r.mesh.inFlight > 0 || r.node.buffered.batches > 0) return false;
  return true;
}
