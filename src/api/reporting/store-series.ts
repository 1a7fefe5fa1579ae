import type { AssetCatalogue } from '../../assets/catalogue.js';
import type { StoreSync } from '../../cloud/store/port.js';
import { spaceTrafficOccupancy, TrafficSpaceIndex } from '../../cloud/space-traffic.js';
import { columnsOf, type MinuteColumns } from './columns.js';
import type { MinuteTraffic, MinuteValue, SeriesPort } from './series.js';
import { openPresenceReader, type PresenceReader } from './sqlite-reader.js';

/**
 * The reporting API's view of the cloud store: per-minute presence from the store's 1m
 * series, traffic counts per sensor, and traffic occupancy computed on read with the same
 * functions the pipeline uses (raw since the local day's first instant, or calibrated).
 * With `dbPath` (the store's SQLite file), presence minutes are also read as columns through
 * a read-only connection of their own (see sqlite-reader.ts); without it, through the store.
 */
export function storeSeries(store: StoreSync, catalogue: AssetCatalogue, opts: { dbPath?: string } = {}): SeriesPort & { close(): void } {
  const spaces = new TrafficSpaceIndex(catalogue);
  const zoneOf = (id: string): string => catalogue.timezoneOf(id);
  let reader: PresenceReader | null = null;
  const fileReader = (): PresenceReader | null => {
    if (opts.dbPath === undefined || opts.dbPath === ':memory:') return null;
    return (reader ??= openPresenceReader(opts.dbPath));
  };
  const inRange = <T extends { minuteMs: number }>(rows: readonly T[], from: number, to: number): T[] => rows.filter((r) => r.minuteMs >= from && r.minuteMs < to);
  return {
    /** Closes the read-only connection, if one was opened (the store itself is the caller's). */
    close(): void {
      reader?.close();
      reader = null;
    },
    presenceMinutes(spaceId, from, to): MinuteValue[] {
      return store.presenceSeries(spaceId, '1m', from, to).map((p) => ({ minuteMs: p.bucketMs, value: p.value }));
    },
    presenceColumns(spaceId, from, to): MinuteColumns {
      const r = fileReader();
      return r ? r.presenceColumns(spaceId, from, to) : columnsOf(store.presenceSeries(spaceId, '1m', from, to).map((p) => ({ minuteMs: p.bucketMs, value: p.value })));
    },
    presenceRollupMax(spaceId, every, timezone, from, to): MinuteValue[] | null {
      if (zoneOf(spaceId) !== timezone) return null;
      return store.presenceSeries(spaceId, every, from, to).map((p) => ({ minuteMs: p.bucketMs, value: p.value }));
    },
    trafficMinutes(sensorId, from, to): MinuteTraffic[] {
      return inRange(store.trafficMinutes(sensorId), from, to).map((r) => ({ minuteMs: r.minuteMs, in: r.in, out: r.out }));
    },
    trafficOccupancyMinutes(spaceId, from, to, mode, calibrationPoints): MinuteValue[] {
      const space = spaces.get(spaceId);
      return space ? spaceTrafficOccupancy(store, space, zoneOf(spaceId), from, to, mode === 'raw' ? null : { calibrationPoints }) : [];
    },
  };
}
