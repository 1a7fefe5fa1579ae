import { floorToMinute } from '../core/time.js';

/**
 * Traffic counts per sensor per minute: the sums of `in` and `out` of the sensor's traffic
 * packets whose sensedAtMs (end of the counting interval) falls in the minute. Packets are
 * held by (sensor, sensedAtMs), so a packet received twice counts once.
 */
import type { TrafficMinuteRow } from '../store/rows.js';

interface Counts {
  in: number;
  out: number;
}

export class TrafficAggregator {
  readonly #minutes = new Map<number, Map<string, Map<number, Counts>>>();

  /** Adds one traffic packet; a second packet for the same (sensor, instant) keeps the larger counts, whatever the order. */
  add(sensorId: string, sensedAtMs: number, counts: Counts): void {
    const minuteMs = floorToMinute(sensedAtMs);
    let sensors = this.#minutes.get(minuteMs);
    if (!sensors) this.#minutes.set(minuteMs, (sensors = new Map()));
    let packets = sensors.get(sensorId);
    if (!packets) sensors.set(sensorId, (packets = new Map()));
    const prev = packets.get(sensedAtMs);
    if (prev === undefined || counts.in > prev.in || (counts.in === prev.in && counts.out > prev.out)) {
      packets.set(sensedAtMs, { in: counts.in, out: counts.out });
    }
  }

  hasMinute(minuteMs: number): boolean {
    return this.#minutes.has(minuteMs);
  }

  /** Minutes holding data, ascending. */
  openMinutes(): number[] {
    return [...this.#minutes.keys()].sort((a, b) => a - b);
  }

  /** Computes a minute's rows (sorted by sensor id) and forgets its data. */
  finalise(minuteMs: number): TrafficMinuteRow[] {
    const rows = this.compute(minuteMs);
    this.#minutes.delete(minuteMs);
    return rows;
  }

  drop(minuteMs: number): void {
    this.#minutes.delete(minuteMs);
  }

  /** Computes a minute's rows (sorted by sensor id) from the packets held so far; keeps them. */
  compute(minuteMs: number): TrafficMinuteRow[] {
    const sensors = this.#minutes.get(minuteMs);
    if (!sensors) return [];
    return [...sensors.keys()].sort().map((sensorId) => {
      let sumIn = 0;
      let sumOut = 0;
      for (const c of (sensors.get(sensorId) as Map<number, Counts>).values()) {
        sumIn += c.in;
        sumOut += c.out;
      }
      return { sensorId, minuteMs, in: sumIn, out: sumOut };
    });
  }
}
