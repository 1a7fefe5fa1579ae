import type { VirtualClock } from '../core/clock.js';
import { ackTopic, allHivesFilter } from '../core/topics.js';
import { AppError, ErrorCodes, isAppError } from '../core/errors.js';
import { ValueCounts } from '../core/value-counts.js';
import type { SensorPacket } from '../edge/packet.js';
import { FaultTimeline } from '../mesh/faults.js';
import { MeshSim } from '../mesh/mesh.js';
import { fleetIndex } from '../mesh/topology.js';
import { PROTOCOL_MINOR } from '../proto/limits.js';
import type { SensorHealth, WirePacket } from '../proto/messages.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import { DEFAULT_NETWORK } from '../scenario/resolve-network.js';
import { toWire, type DeliveryStage, type DeliveryStats } from './delivery.js';
import { HiveNode, type Transmission } from './hive-node.js';
import { batterySummary, latencySummary, sumLedgers, type DeliveryReport, type HiveLedger } from './ledger.js';
import type { HiveLink } from './mqtt-hive.js';
import { UPLINK_PROFILES } from './uplink-profile.js';

/**
 * Delivery through the simulated mesh and hives (docs/protocol.md): sensors → TSCH mesh
 * (MeshSim) → hive batching, store-and-forward and retransmission (HiveNode) → the real MQTT
 * link → cloud, whose end-to-end acks release the hive's buffer. Everything is decided in
 * sim time from seeded streams; hives publish one message at a time, in scenario order, each
 * waiting for the cloud's ack, so captures and results are deterministic at `--speed max`.
 */
export type MeshItem = { kind: 'data'; packet: WirePacket } | { kind: 'health'; health: SensorHealth };

export interface MeshHiveEndpoint {
  readonly id: string;
  readonly serial: string;
  readonly firmwareVersion: string;
  readonly link: HiveLink;
}

interface HiveRig {
  endpoint: MeshHiveEndpoint;
  sensors: SensorModel[];
  mesh: MeshSim<MeshItem>;
  node: HiveNode;
  health: Map<string, SensorHealth>;
  lastParents: Map<string, string>;
  ledger: HiveLedger;
}

export interface MeshDeliveryStage extends DeliveryStage {
  /** After the last flush: keeps flushing in sim time until the mesh and the hives are empty (bounded). */
  drain(): Promise<void>;
  report(): DeliveryReport;
}

/** Longest the end-of-run drain continues past the end, sim time. */
const MAX_DRAIN_MS = 6 * 3_600_000;

export interface MeshDeliveryHooks {
  /** Restarts the broker and resolves once every client is back (the broker_restart fault). */
  restartBroker?: () => Promise<void>;
  /** Before each flush at `atMs`: the platform's clock is moved there, so what it receives is received at `atMs`. */
  beforeFlush?: (atMs: number) => Promise<void>;
}

export function createMeshDelivery(model: ScenarioModel, hives: readonly MeshHiveEndpoint[], clock: VirtualClock, hooks: MeshDeliveryHooks = {}): MeshDeliveryStage {
  const network = model.network ?? DEFAULT_NETWORK;
  const faults = new FaultTimeline(model.faults);
  const sensors = new Map(model.sensors.map((s) => [s.id, s]));
  const rigs = new Map<string, HiveRig>();
  const fleet = fleetIndex(model);
  for (const h of hives) {
    const hm = fleet.hives.get(h.id);
    if (!hm) continue;
    const node = new HiveNode({
      hiveId: h.id, serial: h.serial, params: network.hive, profile: UPLINK_PROFILES[hm.backhaul], faults, seed: model.seed,
      startMs: model.startMs, endMs: model.startMs + model.durationMs, batchIntervalMs: model.batchIntervalMs,
    });
    rigs.set(h.id, { endpoint: h, sensors: fleet.sensorsOfHive.get(h.id) ?? [], mesh: new MeshSim(model, h.id, network.mesh, faults), node, health: new Map(), lastParents: new Map(), ledger: emptyLedger(h.serial) });
  }
  const hops = new Map<number, number>();
  let lastFlushMs = model.startMs;
  const stats: DeliveryStats = { packetsSubmitted: 0, batchesPublished: 0 };

  const submitOne = (p: SensorPacket): void => {
    const s = sensors.get(p.sensorId);
    const rig = s ? rigs.get(s.hiveId) : undefined;
    if (!s || !rig) throw new Error(`no hive route for sensor ${p.sensorId}`);
    if (faults.offlineWindow(s.id, p.sensedAtMs) !== null) {
      rig.ledger.offlineSuppressed++;
      return;
    }
    stats.packetsSubmitted++;
    rig.ledger.generated++;
    rig.mesh.batteries.get(s.id)?.sample(s.mode, s.reportIntervalMs);
    const overflowBefore = rig.mesh.counters.queueOverflow;
    if (rig.mesh.send(s, p.sensedAtMs, { kind: 'data', packet: toWire(p, s.mac) })) return;
    if (rig.mesh.counters.queueOverflow > overflowBefore) rig.ledger.meshQueueOverflow++;
    else rig.ledger.meshDropped++;
  };

  const sendHealth = (rig: HiveRig, from: number, to: number): void => {
    const every = network.mesh.healthIntervalMs;
    for (const s of rig.sensors) {
      const offset = (rig.mesh.mesh.index.get(s.id) ?? 0) * 997 % every;
      for (let t = model.startMs + offset + Math.ceil((from - model.startMs - offset) / every) * every; t <= to; t += every) {
        if (t <= from || faults.offlineWindow(s.id, t) !== null) continue;
        rig.mesh.send(s, t, { kind: 'health', health: healthOf(rig, s, t, faults.lastBootAfterOffline(s.id, t) ?? model.startMs) });
      }
    }
  };

  const flushHive = async (rig: HiveRig, atMs: number): Promise<number> => {
    sendHealth(rig, lastFlushMs, atMs);
    for (const a of rig.mesh.takeArrived(atMs)) {
      if (a.item.kind === 'health') {
        rig.health.set(a.sensorId, a.item.health);
        continue;
      }
      rig.node.receive([a.item.packet]);
      hops.set(a.hops, (hops.get(a.hops) ?? 0) + 1);
    }
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

  let brokerRestarts = 0;
  const flush = async (atMs: number): Promise<number> => {
    await hooks.beforeFlush?.(atMs);
    // Between two flushes nothing is in flight: the restart is deterministic, and the hives'
    // buffers cover whatever the restarted broker forgot.
    for (const _ of faults.brokerRestartsIn(lastFlushMs, atMs)) {
      if (!hooks.restartBroker) throw new AppError(ErrorCodes.NOT_IMPLEMENTED, 'broker_restart faults need the embedded broker (not --broker)');
      await hooks.restartBroker();
      brokerRestarts++;
    }
    // Hives publish side by side (each its own batches in sequence order): the platform gets
    // every batch of the interval at once. What it computes does not depend on the order
    // batches of different hives arrive in.
    let n = 0;
    for (const published of await Promise.all(Array.from(rigs.values(), (rig) => flushHive(rig, atMs)))) n += published;
    lastFlushMs = atMs;
    stats.batchesPublished += n;
    return n;
  };

  return {
    submit(packets) {
      for (const p of packets) submitOne(p);
    },
    flush,
    async drain() {
      const endMs = lastFlushMs;
      for (let t = endMs + model.batchIntervalMs; t <= endMs + MAX_DRAIN_MS && !allEmpty(rigs); t += model.batchIntervalMs) {
        clock.advanceTo(t);
        await flush(t);
      }
    },
    stats: () => ({ ...stats }),
    report: () => ({ ...buildReport(rigs, hops, clock.now()), brokerRestarts }),
  };
}

/** The broker-restart hook for an embedded broker (none for an external one). */
/**
 * The broker-restart fault through the platform's interface: restart, then wait until the
 * cloud's uplink subscription and every hive's ack subscription are back.
 */
export function brokerRestartHook(model: ScenarioModel, restartBroker: ((waitForFilters: readonly string[]) => Promise<void>) | null): MeshDeliveryHooks {
  const filters = [allHivesFilter('uplink'), ...model.hives.map((h) => ackTopic(h.serial))];
  return restartBroker ? { restartBroker: () => restartBroker(filters) } : {};
}

/** The platform's hive links as the stage needs them, in scenario order. */
export function meshEndpoints(model: ScenarioModel, links: ReadonlyMap<string, { readonly link: HiveLink }>): MeshHiveEndpoint[] {
  return model.hives.flatMap((h) => {
    const e = links.get(h.id);
    return e ? [{ id: h.id, serial: h.serial, firmwareVersion: h.firmwareVersion, link: e.link }] : [];
  });
}

async function transmit(rig: HiveRig, tx: Transmission): Promise<number | null> {
  try {
    return await rig.endpoint.link.transmit(tx.batch);
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
    sensorMac: s.mac, measuredAtMs: t, batteryLevel: b ? b.level(t) : 1, batteryRuntimeS: b ? b.runtimeS(t) : 0, rssiDbm: q.rssi, linkPdr: q.pdr,
    uptimeMs: t - bootMs, parent: q.parent === rig.endpoint.id ? rig.endpoint.serial : q.parent, hops: q.hops, queueOverflows: q.overflows,
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
    hiveSerial: rig.endpoint.serial, sentAtMs: t, firmwareVersion: rig.endpoint.firmwareVersion, protocolMinor: PROTOCOL_MINOR, state, uptimeMs,
    netPathStability: sensors.length ? stable / sensors.length : 1, ackedSeq: rig.node.ackedSeq, nextSeq: rig.node.nextSeq,
    bufferedBatches: rig.node.buffered.batches, bufferedBytes: rig.node.buffered.bytes, droppedPackets: rig.node.counters.overflowPackets, sensors,
  };
}

function emptyLedger(hive: string): HiveLedger {
  return {
    hive, generated: 0, offlineSuppressed: 0, meshDelivered: 0, meshDropped: 0, meshQueueOverflow: 0, bufferOverflow: 0, batches: 0, transmissions: 0,
    retransmitted: 0, lostInFlight: 0, duplicated: 0, acked: 0, undelivered: 0, lost: 0, heartbeats: 0, latencyMs: latencySummary(new ValueCounts()),
  };
}

function buildReport(rigs: ReadonlyMap<string, HiveRig>, hops: ReadonlyMap<number, number>, nowMs: number): DeliveryReport {
  const ledgers: HiveLedger[] = [];
  const all = new ValueCounts();
  let frames = 0;
  let delivered = 0;
  let attempts = 0;
  let rejoins = 0;
  let duplicates = 0;
  for (const r of rigs.values()) {
    const c = r.node.counters;
    const l = r.ledger;
    ledgers.push({
      ...l, meshDelivered: c.packetsIn, bufferOverflow: c.overflowPackets, batches: c.batches, transmissions: c.transmissions, retransmitted: c.retransmissions,
      lostInFlight: c.lostInFlight, duplicated: Math.max(0, c.retransmissions - c.lostInFlight), acked: c.ackedPackets,
      undelivered: l.generated - l.meshDropped - l.meshQueueOverflow - c.overflowPackets - c.ackedPackets, lost: l.generated - c.ackedPackets,
      latencyMs: latencySummary(r.node.latenciesMs),
    });
    all.addAll(r.node.latenciesMs);
    frames += r.mesh.counters.sent;
    delivered += r.mesh.counters.delivered;
    attempts += r.mesh.counters.attempts;
    rejoins += r.mesh.counters.rejoins;
    duplicates += r.mesh.counters.duplicates;
  }
  const ok = [...rigs.values()].reduce((a, r) => a + r.mesh.counters.delivered, 0);
  const histogram = Object.fromEntries([...hops.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v]));
  return {
    hives: ledgers,
    overall: { ...sumLedgers(ledgers, all), meshDeliveryRatio: frames ? Math.round((delivered / frames) * 1e6) / 1e6 : 1, meshAttemptSuccess: attempts ? Math.round((ok / attempts) * 1e4) / 1e4 : 1, meshRejoins: rejoins, meshDuplicates: duplicates },
    hopHistogram: histogram,
    battery: batterySummary([...rigs.values()].flatMap((r) => [...r.mesh.batteries.values()]), nowMs),
  };
}
