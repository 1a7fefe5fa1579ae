import { ValueCounts } from '../core/value-counts.js';
import type { EdgePackets } from '../edge/edge-packets.js';
import type { FaultTimeline } from '../mesh/faults.js';
import { MeshSim } from '../mesh/mesh.js';
import { fleetIndex } from '../mesh/topology.js';
import { PROTOCOL_MINOR } from '../proto/limits.js';
import type { SensorHealth } from '../proto/messages.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import { DEFAULT_NETWORK } from '../scenario/resolve-network.js';
import { isAppError } from '../core/errors.js';
import type { HiveGroupReport, RigReport } from './delivery-report.js';
import { HiveNode, type Transmission } from './hive-node.js';
import { latencySummary, type HiveLedger } from './ledger.js';
import type { HiveLink } from './mqtt-hive.js';
import { HeldPackets, nextPacket } from './packet-transfer.js';
import { UPLINK_PROFILES } from './uplink-profile.js';
import { onlineTimesOf } from '../scenario/ramp.js';

/**
 * A group of hives simulated together — all of a run's, or one hive thread's share
 * (hive-threads.ts) — each with its sensors' TSCH mesh (MeshSim), its batching and
 * store-and-forward (HiveNode) and its real MQTT link. Hives share nothing but the pure
 * fault timeline, so what a hive does depends only on the packets its own sensors submit and
 * the flush instants, never on which group or thread it is simulated in.
 */
export interface MeshHiveEndpoint {
  readonly id: string;
  readonly serial: string;
  readonly firmwareVersion: string;
  readonly link: HiveLink;
}

interface HiveRig {
  endpoint: MeshHiveEndpoint;
  sensors: SensorModel[];
  /** A frame's item: a packet's handle in the group's held packets (≥ 0), or −1 − a health report's key in `healthInFlight`. */
  mesh: MeshSim;
  node: HiveNode;
  health: Map<string, SensorHealth>;
  healthInFlight: Map<number, SensorHealth>;
  lastParents: Map<string, string>;
  ledger: HiveLedger;
  /** When the hive comes online (a ramp, scenario/ramp.ts; the start without one): before, it has not started. */
  onlineAtMs: number;
}

/** One flush of a group: batches published, packets its sensors submitted since the last, whether mesh and buffers are empty now. */
export interface GroupFlush {
  published: number;
  submitted: number;
  empty: boolean;
}

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

export function createHiveGroup(
  model: ScenarioModel,
  hives: readonly MeshHiveEndpoint[],
  faults: FaultTimeline,
): HiveGroup {
  const network = model.network ?? DEFAULT_NETWORK;
  const rigs = new Map<string, HiveRig>();
  const fleet = fleetIndex(model);
  // Over every hive of the model, not the group's: the seeded choice must not depend on the thread layout.
  const onlineAt = onlineTimesOf(model);
  for (const h of hives) {
    const hm = fleet.hives.get(h.id);
    if (!hm) continue;
    const onlineAtMs = onlineAt.get(h.id) ?? Number.POSITIVE_INFINITY;
    const node = new HiveNode({
      hiveId: h.id,
      serial: h.serial,
      params: network.hive,
      profile: UPLINK_PROFILES[hm.backhaul],
      faults,
      seed: model.seed,
      startMs: model.startMs,
      endMs: model.startMs + model.durationMs,
      batchIntervalMs: model.batchIntervalMs,
      ...(onlineAtMs > model.startMs && Number.isFinite(onlineAtMs) ? { onlineAtMs } : {}),
    });
    rigs.set(h.id, {
      endpoint: h,
      sensors: fleet.sensorsOfHive.get(h.id) ?? [],
      mesh: new MeshSim(model, h.id, network.mesh, faults),
      node,
      health: new Map(),
      healthInFlight: new Map(),
      lastParents: new Map(),
      ledger: emptyLedger(h.serial),
      onlineAtMs,
    });
  }
  // Per sensor (by index in model.sensors): its hive's rig and battery, looked up once, not per packet.
  const rigOf = model.sensors.map((s) => rigs.get(s.hiveId));
  const batteryOf = model.sensors.map((s) => rigs.get(s.hiveId)?.mesh.batteries.get(s.id));
  const nodeOf = Int32Array.from(model.sensors, (s) => rigs.get(s.hiveId)?.mesh.mesh.index.get(s.id) ?? -1);
  const held = new HeldPackets(model.sensors);
  /** Packets that reached their hive, by hops taken. */
  const hops: number[] = [];
  let healthKeys = 0;
  let lastFlushMs = model.startMs;
  let submitted = 0;

  const submitPackets = (buf: Float64Array, from: number, max: number, release: () => void): number => {
    const hold = held.hold(buf, release);
    let at = from;
    for (let k = 0; k < max && at < buf.length; k++) {
      const i = buf[at] as number;
      const s = model.sensors[i];
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
      submitted++;
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
  };

  const sendHealth = (rig: HiveRig, from: number, to: number): void => {
    const every = network.mesh.healthIntervalMs;
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
        const key = healthKeys++;
        if (rig.mesh.send(s, t, -1 - key)) rig.healthInFlight.set(key, health);
      }
    }
  };

  const flushHive = async (rig: HiveRig, atMs: number): Promise<number> => {
    // Not started yet: nothing in its mesh, no heartbeat, its link not connected (ramp.ts).
    if (atMs < rig.onlineAtMs) return 0;
    // Its first delivery online: the hives of one ramp step log in side by side (a reconnect storm).
    if (rig.endpoint.link.connect) await rig.endpoint.link.connect();
    sendHealth(rig, lastFlushMs, atMs);
    // In arrival order, encoded straight into the hive's next batches (no object per packet).
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
  };

  return {
    submit(packets) {
      // The edge's flat form is the hand-off buffer's (packet-transfer.ts): held as it is.
      submitPackets(packets.data, 0, Number.POSITIVE_INFINITY, packets.release);
    },
    submitPackets,
    async flush(atMs) {
      // Hives publish side by side (each its own batches in sequence order): the platform gets
      // every batch of the interval at once. What it computes does not depend on the order
      // batches of different hives arrive in.
      let published = 0;
      for (const n of await Promise.all(Array.from(rigs.values(), (rig) => flushHive(rig, atMs)))) published += n;
      lastFlushMs = atMs;
      const out = { published, submitted, empty: allEmpty(rigs) };
      submitted = 0;
      return out;
    },
    report: (nowMs) => ({
      hives: [...rigs.values()].map((r) => rigReport(r, nowMs)),
      hops: hops.flatMap((count, n): Array<[number, number]> => (count > 0 ? [[n, count]] : [])),
    }),
  };
}

function rigReport(r: HiveRig, nowMs: number): RigReport {
  const c = r.node.counters;
  const l = r.ledger;
  return {
    ledger: {
      ...l,
      meshDelivered: c.packetsIn,
      bufferOverflow: c.overflowPackets,
      batches: c.batches,
      transmissions: c.transmissions,
      retransmitted: c.retransmissions,
      lostInFlight: c.lostInFlight,
      duplicated: Math.max(0, c.retransmissions - c.lostInFlight),
      acked: c.ackedPackets,
      undelivered: l.generated - l.meshDropped - l.meshQueueOverflow - c.overflowPackets - c.ackedPackets,
      lost: l.generated - c.ackedPackets,
      latencyMs: latencySummary(r.node.latenciesMs),
    },
    latencies: r.node.latenciesMs.toArrays(),
    mesh: {
      sent: r.mesh.counters.sent,
      delivered: r.mesh.counters.delivered,
      attempts: r.mesh.counters.attempts,
      rejoins: r.mesh.counters.rejoins,
      duplicates: r.mesh.counters.duplicates,
    },
    batteries: [...r.mesh.batteries.values()].map((b) => ({
      wired: b.wired,
      level: b.level(nowMs),
      runtimeS: b.runtimeS(nowMs),
      changeByMs: b.changeByMs(nowMs),
    })),
  };
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

function healthOf(rig: HiveRig, s: SensorModel, t: number, bootMs: number): SensorHealth {
  const q = rig.mesh.linkQuality(s.id, t);
  const b = rig.mesh.batteries.get(s.id);
  return {
    sensorMac: s.mac,
    measuredAtMs: t,
    batteryLevel: b ? b.level(t) : 1,
    batteryRuntimeS: b ? b.runtimeS(t) : 0,
    rssiDbm: q.rssi,
    linkPdr: q.pdr,
    uptimeMs: t - bootMs,
    parent: q.parent === rig.endpoint.id ? rig.endpoint.serial : q.parent,
    hops: q.hops,
    queueOverflows: q.overflows,
  };
}

function heartbeatOf(rig: HiveRig, t: number, sent: readonly Transmission[]) {
  const { state, uptimeMs } = rig.node.heartbeatState(t, sent);
  const sensors = [...rig.health.values()];
  let stable = 0;
  for (const h of sensors) {
    if (rig.lastParents.get(h.sensorMac) === h.parent || !rig.lastParents.has(h.sensorMac)) stable++;
    rig.lastParents.set(h.sensorMac, h.parent);
  }
  return {
    hiveSerial: rig.endpoint.serial,
    sentAtMs: rig.node.clockAt(t),
    firmwareVersion: rig.endpoint.firmwareVersion,
    protocolMinor: PROTOCOL_MINOR,
    state,
    uptimeMs,
    netPathStability: sensors.length ? stable / sensors.length : 1,
    ackedSeq: rig.node.ackedSeq,
    nextSeq: rig.node.nextSeq,
    bufferedBatches: rig.node.buffered.batches,
    bufferedBytes: rig.node.buffered.bytes,
    droppedPackets: rig.node.counters.overflowPackets,
    sensors,
  };
}

function emptyLedger(hive: string): HiveLedger {
  return {
    hive,
    generated: 0,
    offlineSuppressed: 0,
    notYetOnline: 0,
    meshDelivered: 0,
    meshDropped: 0,
    meshQueueOverflow: 0,
    bufferOverflow: 0,
    batches: 0,
    transmissions: 0,
    retransmitted: 0,
    lostInFlight: 0,
    duplicated: 0,
    acked: 0,
    undelivered: 0,
    lost: 0,
    heartbeats: 0,
    latencyMs: latencySummary(new ValueCounts()),
  };
}
