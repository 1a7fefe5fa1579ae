import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { GqlContext } from './context.js';

/**
 * Sensor lists whose items' status fields are asked for read those sensors' records in one
 * store call before GraphQL resolves the items (status.ts `preloadSensors`), so each status
 * field answers at once instead of with a promise per field and item: a fleet listing asks
 * for tens of thousands. Lists whose selection asks for none read nothing.
 */
const SENSOR_STATUS_FIELDS: ReadonlySet<string> = new Set([
  'is_online',
  'is_streaming',
  'last_heartbeat',
  'last_raw_message',
  'last_occupancy_message',
  'power_type',
  'last_battery_change_date',
  'next_battery_change_date',
  'battery_change_by_date',
  'battery_level',
  'estimated_total_runtime_days',
]);

/** Whether the selection asks for a sensor status field at any depth (fragments followed once each). */
function asks(set: SelectionSetNode | undefined, info: GraphQLResolveInfo, seen: Set<string>): boolean {
  for (const sel of set?.selections ?? []) {
    if (sel.kind === 'Field' && (SENSOR_STATUS_FIELDS.has(sel.name.value) || asks(sel.selectionSet, info, seen)))
      return true;
    if (sel.kind === 'InlineFragment' && asks(sel.selectionSet, info, seen)) return true;
    if (sel.kind === 'FragmentSpread' && !seen.has(sel.name.value)) {
      seen.add(sel.name.value);
      if (asks(info.fragments[sel.name.value]?.selectionSet, info, seen)) return true;
    }
  }
  return false;
}

/** `result()` once the sensors' status is read, when the field asks for it; at once otherwise. */
export function afterSensorStatus<R>(
  ctx: GqlContext,
  info: GraphQLResolveInfo | undefined,
  sensors: ReadonlyArray<{ id: string }>,
  result: () => R,
): R | Promise<R> {
  const status = ctx.status;
  if (!status || !info || sensors.length === 0 || !info.fieldNodes.some((n) => asks(n.selectionSet, info, new Set())))
    return result();
  return status.preloadSensors(sensors.map((s) => s.id)).then(result);
}
