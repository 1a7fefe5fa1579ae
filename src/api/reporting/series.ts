/**
 * Where reporting reads per-minute data: the cloud store behind a port, so the reporting
 * code runs unchanged over SQLite, PostgreSQL or an in-memory fixture. Rows are sorted by
 * minute and lie in [startMs, stopMs).
 */
export interface MinuteValue {
  minuteMs: number;
  value: number;
}

export interface MinuteTraffic {
  minuteMs: number;
  in: number;
  out: number;
}

export interface SeriesPort {
  presenceMinutes(spaceId: string, startMs: number, stopMs: number): readonly MinuteValue[];
  trafficMinutes(sensorId: string, startMs: number, stopMs: number): readonly MinuteTraffic[];
  /** Traffic-based occupancy of a floor or room (in − out since the local day's start), raw or calibrated. */
  trafficOccupancyMinutes(
    spaceId: string,
    startMs: number,
    stopMs: number,
    mode: 'raw' | 'calibrated',
    calibrationPoints: ReadonlyArray<{ timestampMs: number; occupancy: number }>,
  ): readonly MinuteValue[];
}
