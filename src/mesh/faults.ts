import type { FaultModel } from '../scenario/model.js';

/** Fault windows as the mesh and hive query them, pure. */
export interface Window {
  readonly from: number;
  readonly to: number;
}

export class FaultTimeline {
  readonly #faults: readonly FaultModel[];

  /** Whether any sensor ever goes offline: without, the mesh's routing never changes. */
  readonly anyOffline: boolean;

  constructor(faults: readonly FaultModel[] | undefined) {
    this.#faults = faults ?? [];
    this.anyOffline = this.#faults.some((f) => f.kind === 'sensor_offline');
  }

  #active(t: number): FaultModel[] {
    return this.#faults.filter((f) => t >= f.atMs && t < f.atMs + f.durationMs);
  }

  /** Sensors offline at t. */
  offlineAt(t: number): Set<string> {
    const out = new Set<string>();
    for (const f of this.#active(t)) if (f.kind === 'sensor_offline') for (const id of f.sensorIds) out.add(id);
    return out;
  }

  /** Window of an offline fault of the sensor covering t, or null. */
  offlineWindow(sensorId: string, t: number): Window | null {
    const f = this.#active(t).find((x) => x.kind === 'sensor_offline' && x.sensorIds.includes(sensorId));
    return f ? { from: f.atMs, to: f.atMs + f.durationMs } : null;
  }

  /** End of the latest offline window of the sensor ending at or before t (its last reboot), or null. */
  lastBootAfterOffline(sensorId: string, t: number): number | null {
    let last: number | null = null;
    for (const f of this.#faults) {
      if (f.kind !== 'sensor_offline' || !f.sensorIds.includes(sensorId)) continue;
      const end = f.atMs + f.durationMs;
      if (end <= t && (last === null || end > last)) last = end;
    }
    return last;
  }

  /** Combined extra loss on links from this sensor at t, 0..1. */
  linkLoss(sensorId: string, t: number): number {
    let keep = 1;
    for (const f of this.#active(t)) if (f.kind === 'link_degradation' && f.sensorIds.includes(sensorId)) keep *= 1 - f.loss;
    return 1 - keep;
  }

  /** A reboot window of the hive covering t, or null. */
  rebootWindow(hiveId: string, t: number): Window | null {
    const f = this.#active(t).find((x) => x.kind === 'hive_reboot' && x.hiveIds.includes(hiveId));
    return f ? { from: f.atMs, to: f.atMs + f.durationMs } : null;
  }

  /** An uplink outage (or reboot: no uplink either) of the hive covering t, or null. */
  uplinkDownWindow(hiveId: string, t: number): Window | null {
    const f = this.#active(t).find((x) => (x.kind === 'hive_outage' || x.kind === 'hive_reboot') && x.hiveIds.includes(hiveId));
    return f ? { from: f.atMs, to: f.atMs + f.durationMs } : null;
  }

  /** Hive reboots that ended in (from, to]. */
  rebootsEnded(hiveId: string, from: number, to: number): number[] {
    return this.#faults
      .filter((f) => f.kind === 'hive_reboot' && f.hiveIds.includes(hiveId) && f.atMs + f.durationMs > from && f.atMs + f.durationMs <= to)
      .map((f) => f.atMs + f.durationMs);
  }

  brokerRestartsIn(from: number, to: number): number[] {
    return this.#faults.filter((f) => f.kind === 'broker_restart' && f.atMs > from && f.atMs <= to).map((f) => f.atMs);
  }
}
