import type { AssetCatalogue } from '../assets/catalogue.js';
import { calibrate, type CalibrationPoint } from './calibration.js';
import { LocalDays } from './local-day.js';
import { occupancyBetween, trafficSpaces, type OccupancyPoint, type TrafficSpace } from './traffic-occupancy.js';
import type { TrafficMinuteRow } from '../store/rows.js';

/**
 * Traffic occupancy as the platform serves it, one definition for the run report (cloud.ts)
 * and the reporting API (store-series.ts): the catalogue's traffic spaces, and a space's
 * value per minute read from the stored minutes — counted from the local day's first instant
 * whatever window is asked for, raw or calibrated.
 */
export class TrafficSpaceIndex {
  readonly #catalogue: AssetCatalogue;
  #version = -1;
  #list: TrafficSpace[] = [];
  #byId = new Map<string, TrafficSpace>();

  constructor(catalogue: AssetCatalogue) {
    this.#catalogue = catalogue;
  }

  /** Recomputed when the catalogue's devices or spaces change (a counter added through the API counts at once). */
  list(): readonly TrafficSpace[] {
    if (this.#version !== this.#catalogue.ingestVersion) {
      this.#version = this.#catalogue.ingestVersion;
      this.#list = trafficSpaces(this.#catalogue.snapshot());
      this.#byId = new Map(this.#list.map((s) => [s.spaceId, s] as const));
    }
    return this.#list;
  }

  get(spaceId: string): TrafficSpace | undefined {
    this.list();
    return this.#byId.get(spaceId);
  }
}

/** What the computation reads: the store's minute rows. */
export interface StoredMinutes {
  trafficMinutes(sensorId: string): readonly TrafficMinuteRow[];
  presenceMinutes(spaceId: string): ReadonlyArray<{ minuteMs: number; value: number }>;
}

/**
 * A traffic space's occupancy for every minute of [fromMs, toMs) in the zone `timezone`:
 * raw (`calibration` null) or calibrated with the space's presence minutes as hints.
 */
export function spaceTrafficOccupancy(
  minutes: StoredMinutes,
  space: TrafficSpace,
  timezone: string,
  fromMs: number,
  toMs: number,
  calibration: { calibrationPoints?: readonly CalibrationPoint[] | undefined } | null,
): OccupancyPoint[] {
  const days = new LocalDays(timezone);
  const rows = new Map(space.terms.map((t) => [t.sensorId, minutes.trafficMinutes(t.sensorId)] as const));
  if (calibration === null) return occupancyBetween(space, rows, days, fromMs, toMs, null);
  const presence = new Map(minutes.presenceMinutes(space.spaceId).map((m) => [m.minuteMs, m.value] as const));
  const points = calibration.calibrationPoints;
  return occupancyBetween(space, rows, days, fromMs, toMs, (raw) =>
    calibrate(raw, days, { presence, ...(points ? { calibrationPoints: points } : {}) }),
  );
}
