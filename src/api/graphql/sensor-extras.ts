import type { Floor, Sensor } from '../../assets/model.js';
import type { Vec2 } from '../../core/geometry.js';
import { batteryDates, batteryPercent, isoOrNull, type BatteryDates } from './battery.js';
import type { GqlContext } from './context.js';
import type { SensorStatus } from '../../store/port.js';

/**
 * Sensor fields read from the store's record of the sensor (battery, last seen) or derived
 * from its door: resolvers, since most queries select none of them (views.ts says why the
 * common scalars are plain properties instead).
 */
/** `f` of the sensor's stored record: read (batched per request) when the API has device status, null otherwise. */
export function withRecord<T>(ctx: GqlContext, sensorId: string, f: (r: SensorStatus | null) => T): T | Promise<T> {
  if (!ctx.status) return f(null);
  const now = ctx.status.sensorEntryNow(sensorId);
  return now ? f(now.record) : ctx.status.sensorEntry(sensorId).then((e) => f(e.record));
}

const withDates = <T>(s: Sensor, ctx: GqlContext, f: (d: BatteryDates) => T): T | Promise<T> =>
  withRecord(ctx, s.id, (r) => f(batteryDates(r)));

export const sensorExtras = {
  power_type: (s: Sensor, _: unknown, ctx: GqlContext) => withDates(s, ctx, (d) => d.powerType),
  last_battery_change_date: (s: Sensor, _: unknown, ctx: GqlContext) =>
    withDates(s, ctx, (d) => isoOrNull(d.lastChangeMs)),
  next_battery_change_date: (s: Sensor, _: unknown, ctx: GqlContext) =>
    withDates(s, ctx, (d) => isoOrNull(d.nextChangeMs)),
  battery_change_by_date: (s: Sensor, _: unknown, ctx: GqlContext) => withDates(s, ctx, (d) => isoOrNull(d.changeByMs)),
  battery_level: (s: Sensor, _: unknown, ctx: GqlContext) => withRecord(ctx, s.id, batteryPercent),
  estimated_total_runtime_days: (s: Sensor, _: unknown, ctx: GqlContext) =>
    withDates(s, ctx, (d) => d.totalRuntimeDays),
  // Sensors are identified by their MAC (platform-reference §6): it is the serial on the label.
  sensor_serial: (s: Sensor) => s.mac,
  parallel_to_door: (s: Sensor, _: unknown, ctx: GqlContext) => {
    const line = s.doorId ? ctx.assets.doors.get(s.doorId)?.item.line : undefined;
    return line ? parallel(s.orientationDeg, line) : null;
  },
  note: () => null,
  last_raw_message: (s: Sensor, _: unknown, ctx: GqlContext) =>
    withRecord(ctx, s.id, (r) => isoOrNull(r?.lastSeenMs ?? null)),
  // lastSeenMs is the newest packet or health report; when it is the health report's
  // instant, the newest data packet's instant is not kept.
  last_occupancy_message: (s: Sensor, _: unknown, ctx: GqlContext) =>
    withRecord(ctx, s.id, (r) => (r && r.lastSeenMs !== r.healthAtMs ? isoOrNull(r.lastSeenMs) : null)),
};

/** Whether the sensor's orientation (degrees, 0 = +x) runs along the door line, within 45°. */
function parallel(orientationDeg: number, [a, b]: readonly [Vec2, Vec2]): boolean {
  const lineDeg = (Math.atan2(b[1] - a[1], b[0] - a[0]) * 180) / Math.PI;
  const diff = (((orientationDeg - lineDeg) % 180) + 180) % 180;
  return diff < 45 || diff > 135;
}

/** A floor's battery dates: the most recent change and the soonest next change among its sensors. */
export async function floorBatteryDates(
  ctx: GqlContext,
  f: Floor,
): Promise<{ last: string | null; next: string | null }> {
  let last: number | null = null;
  let next: number | null = null;
  const status = ctx.status;
  // One batched read for the floor's sensors (shared with the request's other status fields).
  const records = status
    ? await Promise.all(f.sensorIds.map((id) => status.sensorRecord(id)))
    : f.sensorIds.map(() => null);
  for (const r of records) {
    const d = batteryDates(r);
    if (d.lastChangeMs !== null && (last === null || d.lastChangeMs > last)) last = d.lastChangeMs;
    if (d.nextChangeMs !== null && (next === null || d.nextChangeMs < next)) next = d.nextChangeMs;
  }
  return { last: isoOrNull(last), next: isoOrNull(next) };
}
