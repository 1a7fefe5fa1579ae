import type { HiveState, SensorHealth } from './messages.js';

/** Field mapping of SensorHealth and HiveState between domain and protobufjs objects. */
export type RawHealth = SensorHealth;

export function healthToRaw(h: SensorHealth): Record<string, unknown> {
  return { ...h };
}

export function healthFromRaw(r: RawHealth): SensorHealth {
  return {
    sensorMac: r.sensorMac,
    measuredAtMs: r.measuredAtMs,
    batteryLevel: r.batteryLevel,
    batteryRuntimeS: r.batteryRuntimeS,
    rssiDbm: r.rssiDbm,
    linkPdr: r.linkPdr,
    uptimeMs: r.uptimeMs,
    parent: r.parent,
    hops: r.hops,
    queueOverflows: r.queueOverflows,
  };
}

// HiveState enum numbers (uplink.proto). An unknown (newer) value reads as 'online'.
const STATES: readonly HiveState[] = ['online', 'online', 'streaming', 'catching_up', 'booting'];

export function stateToRaw(s: HiveState): number {
  return s === 'online' ? 1 : STATES.indexOf(s);
}

export function stateFromRaw(n: number): HiveState {
  return STATES[n] ?? 'online';
}
