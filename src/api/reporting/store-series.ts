import type { AssetCatalogue } from '../../assets/catalogue.js';
import { calibrate } from '../../cloud/calibration.js';
import { LocalDays } from '../../cloud/local-day.js';
import type { Store } from '../../cloud/store/port.js';
import { occupancyBetween, trafficSpaces, type TrafficSpace } from '../../cloud/traffic-occupancy.js';
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
export function storeSeries(store: Store, catalogue: AssetCatalogue, opts: { dbPath?: string } = {}): SeriesPort & { close(): void } {
  // Traffic spaces follow the catalogue: recomputed when its devices or spaces change.
  let traffic = { version: -1, spaces: new Map<string, TrafficSpace>() };
  const spaces = (): ReadonlyMap<string, TrafficSpace> => {
    if (traffic.version !== catalogue.ingestVersion) traffic = { version: catalogue.ingestVersion, spaces: new Map(trafficSpaces(catalogue.snapshot()).map((s) => [s.spaceId, s] as const)) };
    return traffic.spaces;
  };
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
      const space = spaces().get(spaceId);
      if (!space) return [];
      const days = new LocalDays(zoneOf(spaceId));
      const rows = new Map(space.terms.map((t) => [t.sensorId, store.trafficMinutes(t.sensorId)] as const));
      // From the local day's first instant, whatever `from` is: a minute's value never depends on the window asked for.
      if (mode === 'raw') return occupancyBetween(space, rows, days, from, to, null);
      const presence = new Map(store.presenceMinutes(spaceId).map((m) => [m.minuteMs, m.value] as const));
      return occupancyBetween(space, rows, days, from, to, (raw) => calibrate(raw, days, { presence, calibrationPoints }));
    },
  };
}
