import { ErrorCodes } from '../core/errors.js';
import { webhookError } from './errors.js';

/**
 * A subscription's `filters` (platform-reference §4; spec §6 rule 3): lists of ids, and an
 * event is sent only when, for every list given, its metadata holds one of those ids. An event
 * without the field (a FLOOR_OCCUPANCY event under `room_ids`) does not hold it, so it is not sent.
 */
export const FILTER_KEYS = {
  org_ids: 'org_id',
  site_ids: 'site_id',
  building_ids: 'building_id',
  floor_ids: 'floor_id',
  room_ids: 'room_id',
  zone_ids: 'zone_id',
  mac_addresses: 'mac_address',
} as const;

export type FilterKey = keyof typeof FILTER_KEYS;
export type Filters = Partial<Record<FilterKey, string[]>>;

/** Checks a filters object (JSON from GraphQL or a scenario); null or {} means no filter. */
export function parseFilters(input: unknown, path: string): Filters {
  if (input === null || input === undefined) return {};
  if (typeof input !== 'object' || Array.isArray(input))
    throw webhookError(ErrorCodes.WEBHOOK_INVALID, path, 'an object of id lists');
  const out: Filters = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(key in FILTER_KEYS))
      throw webhookError(
        ErrorCodes.WEBHOOK_INVALID,
        `${path}.${key}`,
        `unknown filter (one of ${Object.keys(FILTER_KEYS).join(', ')})`,
      );
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
      throw webhookError(ErrorCodes.WEBHOOK_INVALID, `${path}.${key}`, 'a list of strings');
    // MAC addresses compare case-insensitively (the platform writes them lowercase).
    const list = key === 'mac_addresses' ? (value as string[]).map((v) => v.toLowerCase()) : [...(value as string[])];
    if (list.length > 0) out[key as FilterKey] = [...new Set(list)];
  }
  return out;
}

/** Whether an event with this metadata passes the filters. */
export function matchesFilters(filters: Filters, metadata: Readonly<Record<string, string>>): boolean {
  for (const [key, field] of Object.entries(FILTER_KEYS) as Array<[FilterKey, string]>) {
    const list = filters[key];
    if (!list) continue;
    const v = metadata[field];
    if (v === undefined || !list.includes(key === 'mac_addresses' ? v.toLowerCase() : v)) return false;
  }
  return true;
}
