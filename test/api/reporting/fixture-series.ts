import type { MinuteTraffic, MinuteValue, SeriesPort } from '../../../src/api/reporting/series.js';

/** An in-memory SeriesPort: a unit-test double of the store for one module's tests. */
export class MemorySeries implements SeriesPort {
  readonly presence = new Map<string, MinuteValue[]>();
  readonly traffic = new Map<string, MinuteTraffic[]>();
  readonly trafficOcc = new Map<string, MinuteValue[]>();

  setPresence(id: string, rows: MinuteValue[]): void {
    this.presence.set(
      id,
      [...rows].sort((a, b) => a.minuteMs - b.minuteMs),
    );
  }

  async presenceMinutes(id: string, start: number, stop: number): Promise<MinuteValue[]> {
    return (this.presence.get(id) ?? []).filter((r) => r.minuteMs >= start && r.minuteMs < stop);
  }

  async trafficMinutes(id: string, start: number, stop: number): Promise<MinuteTraffic[]> {
    return (this.traffic.get(id) ?? []).filter((r) => r.minuteMs >= start && r.minuteMs < stop);
  }

  async trafficOccupancyMinutes(
    id: string,
    start: number,
    stop: number,
    mode: 'raw' | 'calibrated',
  ): Promise<MinuteValue[]> {
    const rows = (this.trafficOcc.get(id) ?? []).filter((r) => r.minuteMs >= start && r.minuteMs < stop);
    return mode === 'raw' ? rows : rows.map((r) => ({ ...r, value: Math.max(0, r.value) }));
  }
}

export const minutes = (startMs: number, n: number, value: (i: number) => number): MinuteValue[] =>
  Array.from({ length: n }, (_, i) => ({ minuteMs: startMs + i * 60_000, value: value(i) }));
