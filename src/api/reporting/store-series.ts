import type { AssetCatalogue } from '../../assets/catalogue.js';
import type { Store } from '../../store/port.js';
import { spaceTrafficOccupancy, TrafficSpaceIndex } from '../../cloud/space-traffic.js';
import type { MinuteColumns } from './columns.js';
import type { MinuteTraffic, MinuteValue, SeriesPort } from './series.js';

/** The store reads reporting makes: presence series and columns, traffic minutes. */
export type SeriesStore = Pick<
  Store,
  'presenceSeries' | 'presenceColumns' | 'presenceMinutes' | 'trafficSeries' | 'trafficMinutes'
>;

/**
 * The reporting API's view of the cloud store, through the asynchronous `Store` port: per-minute
 * presence from the store's 1m series (as columns for the fast path), rollups for coarse max
 * windows, traffic counts per sensor, and traffic occupancy computed on read with the same
 * functions the pipeline uses (raw since the local day's first instant, or calibrated). Each
 * read is one store call returning the whole range.
 */
export function storeSeries(store: SeriesStore, catalogue: AssetCatalogue): SeriesPort {
  const spaces = new TrafficSpaceIndex(catalogue);
  const zoneOf = (id: string): string => catalogue.timezoneOf(id);
  const values = (points: ReadonlyArray<{ bucketMs: number; value: number }>): MinuteValue[] =>
    points.map((p) => ({ minuteMs: p.bucketMs, value: p.value }));
  return {
    async presenceMinutes(spaceId, from, to): Promise<MinuteValue[]> {
      return values(await store.presenceSeries(spaceId, '1m', from, to));
    },
    presenceColumns(spaceId, from, to): Promise<MinuteColumns> {
      return store.presenceColumns(spaceId, from, to);
    },
    async presenceRollupMax(spaceId, every, timezone, from, to): Promise<MinuteValue[] | null> {
      if (zoneOf(spaceId) !== timezone) return null;
      return values(await store.presenceSeries(spaceId, every, from, to));
    },
    async trafficMinutes(sensorId, from, to): Promise<MinuteTraffic[]> {
      return (await store.trafficSeries(sensorId, '1m', from, to)).map((p) => ({
        minuteMs: p.bucketMs,
        in: p.in,
        out: p.out,
      }));
    },
    async trafficOccupancyMinutes(spaceId, from, to, mode, calibrationPoints): Promise<MinuteValue[]> {
      const space = spaces.get(spaceId);
      if (!space) return [];
      // The computation is synchronous: its minutes are read first, one call per sensor.
      const traffic = new Map<string, Awaited<ReturnType<Store['trafficMinutes']>>>();
      for (const t of space.terms)
        if (!traffic.has(t.sensorId)) traffic.set(t.sensorId, await store.trafficMinutes(t.sensorId));
      const presence = mode === 'raw' ? [] : await store.presenceMinutes(spaceId);
      const minutes = { trafficMinutes: (id: string) => traffic.get(id) ?? [], presenceMinutes: () => presence };
      return spaceTrafficOccupancy(
        minutes,
        space,
        zoneOf(spaceId),
        from,
        to,
        mode === 'raw' ? null : { calibrationPoints },
      );
    },
  };
}
