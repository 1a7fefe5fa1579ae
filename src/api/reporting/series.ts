import type { MinuteColumns, MinuteValue } from './columns.js';

/**
 * Where reporting reads per-minute data: the cloud store behind a port, so the reporting
 * code runs unchanged over SQLite, PostgreSQL or an in-memory fixture. Rows are sorted by
 * minute and lie in [startMs, stopMs). Every read is asynchronous and returns a whole range
 * (one store call per target, never one per row), so a slow network store never blocks the
 * event loop while a report is computed.
 */
export type { MinuteValue } from './columns.js';

export interface MinuteTraffic {
  minuteMs: number;
  in: number;
  out: number;
}

export interface SeriesPort {
  presenceMinutes(spaceId: string, startMs: number, stopMs: number): Promise<readonly MinuteValue[]>;
  /** The same minutes as typed columns (the reporting fast path); optional, `presenceMinutes` otherwise. */
  presenceColumns?(spaceId: string, startMs: number, stopMs: number): Promise<MinuteColumns>;
  /**
   * The store's rollup of presence at a coarser interval (max per bucket, buckets aligned in
   * the space's own zone), one row per bucket keyed by its start; null when the store keeps
   * none for that interval or `timezone` is not the space's zone. Minutes are kept for a week
   * only (spec §8): older windows exist only here.
   */
  presenceRollupMax?(
    spaceId: string,
    every: '5m' | '15m' | '30m' | '1h' | '1d',
    timezone: string,
    startMs: number,
    stopMs: number,
  ): Promise<readonly MinuteValue[] | null>;
  trafficMinutes(sensorId: string, startMs: number, stopMs: number): Promise<readonly MinuteTraffic[]>;
  /** Traffic-based occupancy of a floor or room (in − out since the local day's start), raw or calibrated. */
  trafficOccupancyMinutes(
    spaceId: string,
    startMs: number,
    stopMs: number,
    mode: 'raw' | 'calibrated',
    calibrationPoints: ReadonlyArray<{ timestampMs: number; occupancy: number }>,
  ): Promise<readonly MinuteValue[]>;
}
