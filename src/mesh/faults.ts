import type { FaultModel } from '../scenario/model.js';

/** Fault windows as the mesh and hive query them, pure. */
export interface Window {
  readonly from: number;
  readonly to: number;
}

type Fault<K extends FaultModel['kind']> = Extract<FaultModel, { kind: K }>;

/**
 * Asked per packet, per hop and per transmit attempt by the meshes and hives: so the faults
 * are split by kind once, and a question about a kind the scenario does not have costs a
 * length check — no array is built per call (a fleet's 1 M packets per batch interval made
 * these filters a share of the hive thread's garbage collection).
 */
export class FaultTimeline {
  /** Offline and dead sensors, in scenario order. */
  readonly #offline: ReadonlyArray<Fault<'sensor_offline'> | Fault<'sensor_death'>>;
  readonly #linkLoss: ReadonlyArray<Fault<'link_degradation'>>;
  readonly #reboots: ReadonlyArray<Fault<'hive_reboot'>>;
  /** Outages and reboots (no uplink during either), in scenario order. */
  readonly #uplinkDown: ReadonlyArray<Fault<'hive_outage'> | Fault<'hive_reboot'>>;
  readonly #brokerRestarts: ReadonlyArray<Fault<'broker_restart'>>;
  readonly #duplicates: ReadonlyArray<Fault<'duplicate_batch'>>;
  readonly #skews: ReadonlyArray<Fault<'clock_skew'>>;
  /** battery_drain faults, for the meshes' batteries: each sensor's charge runs out over [from, to). */
  readonly drains: ReadonlyArray<{ readonly sensorIds: readonly string[]; readonly from: number; readonly to: number }>;

  /** Whether any sensor ever goes offline: without, the mesh's routing never changes. */
  readonly anyOffline: boolean;

  constructor(faults: readonly FaultModel[] | undefined) {
    const all = faults ?? [];
    const of = <K extends FaultModel['kind']>(kind: K): Array<Fault<K>> =>
      all.filter((f): f is Fault<K> => f.kind === kind);
    // A dead sensor is one offline to the end of the run (its window ends at FOREVER_MS): it never reboots or rejoins.
    const drains = of('battery_drain');
    this.drains = drains.map((f) => ({ sensorIds: f.sensorIds, from: f.atMs, to: f.atMs + f.durationMs }));
    // A drained battery leaves its sensor dead from the drain's end, as a sensor_death there would.
    const drainedDead = drains.map((f): Fault<'sensor_death'> => ({
      kind: 'sensor_death',
      atMs: f.atMs + f.durationMs,
      durationMs: Number.MAX_SAFE_INTEGER - (f.atMs + f.durationMs),
      src: f.src,
      sensorIds: f.sensorIds,
    }));
    this.#offline = [
      ...all.filter(
        (f): f is Fault<'sensor_offline'> | Fault<'sensor_death'> =>
          f.kind === 'sensor_offline' || f.kind === 'sensor_death',
      ),
      ...drainedDead,
    ];
    this.#linkLoss = of('link_degradation');
    this.#reboots = of('hive_reboot');
    this.#uplinkDown = all.filter(
      (f): f is Fault<'hive_outage'> | Fault<'hive_reboot'> => f.kind === 'hive_outage' || f.kind === 'hive_reboot',
    );
    this.#brokerRestarts = of('broker_restart');
    this.#duplicates = of('duplicate_batch');
    this.#skews = of('clock_skew');
    this.anyOffline = this.#offline.length > 0;
  }

  /** Sensors offline at t. */
  offlineAt(t: number): Set<string> {
    const out = new Set<string>();
    for (const f of this.#offline) if (active(f, t)) for (const id of f.sensorIds) out.add(id);
    return out;
  }

  /** Window of an offline fault of the sensor covering t, or null. */
  offlineWindow(sensorId: string, t: number): Window | null {
    for (const f of this.#offline) if (active(f, t) && f.sensorIds.includes(sensorId)) return windowOf(f);
    return null;
  }

  /** End of the latest offline window of the sensor ending at or before t (its last reboot), or null. */
  lastBootAfterOffline(sensorId: string, t: number): number | null {
    let last: number | null = null;
    for (const f of this.#offline) {
      if (!f.sensorIds.includes(sensorId)) continue;
      const end = f.atMs + f.durationMs;
      if (end <= t && (last === null || end > last)) last = end;
    }
    return last;
  }

  /** Combined extra loss on links from this sensor at t, 0..1. */
  linkLoss(sensorId: string, t: number): number {
    let keep = 1;
    for (const f of this.#linkLoss) if (active(f, t) && f.sensorIds.includes(sensorId)) keep *= 1 - f.loss;
    return 1 - keep;
  }

  /** A reboot window of the hive covering t, or null. */
  rebootWindow(hiveId: string, t: number): Window | null {
    for (const f of this.#reboots) if (active(f, t) && f.hiveIds.includes(hiveId)) return windowOf(f);
    return null;
  }

  /** An uplink outage (or reboot: no uplink either) of the hive covering t, or null. */
  uplinkDownWindow(hiveId: string, t: number): Window | null {
    for (const f of this.#uplinkDown) if (active(f, t) && f.hiveIds.includes(hiveId)) return windowOf(f);
    return null;
  }

  /** Hive reboots that ended in (from, to]. */
  rebootsEnded(hiveId: string, from: number, to: number): number[] {
    if (this.#reboots.length === 0) return [];
    return this.#reboots
      .filter((f) => f.hiveIds.includes(hiveId) && f.atMs + f.durationMs > from && f.atMs + f.durationMs <= to)
      .map((f) => f.atMs + f.durationMs);
  }

  /** Whether the hive's uplink delivers each batch twice at t (a duplicate_batch fault). */
  duplicatingAt(hiveId: string, t: number): boolean {
    for (const f of this.#duplicates) if (active(f, t) && f.hiveIds.includes(hiveId)) return true;
    return false;
  }

  /** How far the hive's clock is off at t, ms (clock_skew faults; overlapping ones add up). */
  clockOffsetAt(hiveId: string, t: number): number {
    let offset = 0;
    for (const f of this.#skews) if (active(f, t) && f.hiveIds.includes(hiveId)) offset += f.offsetMs;
    return offset;
  }

  brokerRestartsIn(from: number, to: number): number[] {
    return this.#brokerRestarts.filter((f) => f.atMs > from && f.atMs <= to).map((f) => f.atMs);
  }
}

function active(f: FaultModel, t: number): boolean {
  return t >= f.atMs && t < f.atMs + f.durationMs;
}

function windowOf(f: FaultModel): Window {
  return { from: f.atMs, to: f.atMs + f.durationMs };
}
