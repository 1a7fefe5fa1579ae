import { describe, expect, it } from 'vitest';
import { TrafficAggregator } from '../../src/cloud/traffic.js';
import { T0 } from './fixture.js';

describe('traffic aggregation per minute', () => {
  it('sums in and out of the packets sensed within each minute', () => {
    const agg = new TrafficAggregator();
    agg.add('sensor_t', T0 + 10_000, { in: 2, out: 0 });
    agg.add('sensor_t', T0 + 20_000, { in: 1, out: 3 });
    agg.add('sensor_t', T0 + 60_000, { in: 4, out: 1 });
    expect(agg.openMinutes()).toEqual([T0, T0 + 60_000]);
    expect(agg.finalise(T0)).toEqual([{ sensorId: 'sensor_t', minuteMs: T0, in: 3, out: 3 }]);
    expect(agg.finalise(T0 + 60_000)).toEqual([{ sensorId: 'sensor_t', minuteMs: T0 + 60_000, in: 4, out: 1 }]);
  });

  it('keeps sensors apart and lists them by id', () => {
    const agg = new TrafficAggregator();
    agg.add('sensor_z', T0 + 1000, { in: 1, out: 0 });
    agg.add('sensor_a', T0 + 1000, { in: 0, out: 2 });
    expect(agg.finalise(T0).map((r) => [r.sensorId, r.in, r.out])).toEqual([
      ['sensor_a', 0, 2],
      ['sensor_z', 1, 0],
    ]);
  });

  it('counts a packet received twice only once', () => {
    const agg = new TrafficAggregator();
    agg.add('sensor_t', T0 + 10_000, { in: 2, out: 1 });
    agg.add('sensor_t', T0 + 10_000, { in: 2, out: 1 });
    expect(agg.finalise(T0)).toEqual([{ sensorId: 'sensor_t', minuteMs: T0, in: 2, out: 1 }]);
  });

  it('returns no rows for a minute without packets', () => {
    expect(new TrafficAggregator().finalise(T0)).toEqual([]);
  });
});
