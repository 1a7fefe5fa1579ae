import { ValueCounts } from '../core/value-counts.js';
import type { FaultTimeline } from '../mesh/faults.js';
import { MeshSim } from '../mesh/mesh.js';
import { fleetIndex } from '../mesh/topology.js';
import { PROTOCOL_MINOR } from '../proto/limits.js';
import type { SensorHealth } from '../proto/messages.js';
import type { NetworkModel, ScenarioModel, SensorModel } from '../scenario/model.js';
import { onlineTimesOf } from '../scenario/ramp.js';
import type { RigReport } from './delivery-report.js';
import { HiveNode, type Transmission } from './hive-node.js';
import { latencySummary, type HiveLedger } from './ledger.js';
import type { HiveLink } from './mqtt-hive.js';
import { UPLINK_PROFILES } from './uplink-profile.js';

/**
 * One hive of a group (hive-group.ts) as the group simulates it: its MQTT endpoint, its
 * sensors' mesh, its node (batching, store-and-forward), the health its sensors reported and
 * its ledger; built once per group, and read into its report and its heartbeats.
 */
/** A hive as the group reaches it: its identity and its MQTT link (connected, or deferred until its ramp step). */
export interface MeshHiveEndpoint {
  readonly id: string;
  readonly serial: string;
  readonly firmwareVersion: string;
  readonly link: HiveLink;
}

export interface HiveRig {
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

/** Each of the group's hives with its mesh and its node, in the order given (a hive the model lacks has none). */
export function hiveRigs(
  model: ScenarioModel,
  network: NetworkModel,
  hives: readonly MeshHiveEndpoint[],
  faults: FaultTimeline,
): Map<string, HiveRig> {
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
  return rigs;
}

export function rigReport(r: HiveRig, nowMs: number): RigReport {
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

export function healthOf(rig: HiveRig, s: SensorModel, t: number, bootMs: number): SensorHealth {
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

export function heartbeatOf(rig: HiveRig, t: number, sent: readonly Transmission[]) {
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
