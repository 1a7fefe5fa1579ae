import { invalidRequest } from '../errors.js';
import { groupStats, r4, type GroupStats } from './aggregate.js';
import type { Point } from './report.js';
import type { ReportingQuery } from './request.js';

/** Response shapes: flat (optionally paged), grouped with statistics, grouped raw; JSON or CSV. */
export interface PageInfo {
  page: number;
  page_item_count: number;
  total_item_count: number;
  total_pages: number;
}

export function paginate(points: Point[], page: ReportingQuery['page']): { items: Point[]; pageInfo: PageInfo | null } {
  if (!page) return { items: points, pageInfo: null };
  const totalPages = Math.max(1, Math.ceil(points.length / page.limit));
  const items = points.slice((page.page - 1) * page.limit, page.page * page.limit);
  return {
    items,
    pageInfo: {
      page: page.page,
      page_item_count: items.length,
      total_item_count: points.length,
      total_pages: totalPages,
    },
  };
}

/**
 * The point field a grouping without `order` is keyed by: the kind of ids the request
 * filtered on (room ids for `filter.rooms`, platform-reference §3), floors otherwise.
 */
const KEY_OF_FILTER: ReadonlyArray<[keyof ReportingQuery['ids'], string]> = [
  ['rooms', 'room_id'],
  ['zones', 'zone_id'],
  ['sensors', 'sensor_id'],
  ['hives', 'hive_id'],
  ['spaces', 'space_id'],
  ['buildings', 'building_id'],
  ['tags', 'tag_id'],
];

export function defaultGroupKey(ids: ReportingQuery['ids']): string {
  return KEY_OF_FILTER.find(([k]) => ids[k] !== undefined)?.[1] ?? 'space_id';
}

/** `group_by.order: [entityField, "time"]` → { entity: { time: stats } } (or raw points). */
export function group(
  points: readonly Point[],
  g: NonNullable<ReportingQuery['groupBy']>,
  defaultKey = 'space_id',
): Record<string, Record<string, GroupStats | Point[]>> {
  const order = g.order.length > 0 ? g.order : [defaultKey, 'time'];
  const [outer, inner = 'time'] = order;
  if (order.length > 2) throw invalidRequest('group_by.order takes at most two fields, e.g. ["room_id", "time"]');
  const groups = new Map<string, Map<string, Point[]>>();
  for (const p of points) {
    const a = String(p[outer as string] ?? '');
    const b = String(p[inner] ?? '');
    if (!((outer as string) in p))
      throw invalidRequest(`group_by.order: the points have no field ${JSON.stringify(outer)}`);
    let m = groups.get(a);
    if (!m) groups.set(a, (m = new Map()));
    const list = m.get(b);
    if (list) list.push(p);
    else m.set(b, [p]);
  }
  const out: Record<string, Record<string, GroupStats | Point[]>> = {};
  for (const [a, m] of groups) {
    const row: Record<string, GroupStats | Point[]> = {};
    for (const [b, list] of m) {
      if (g.raw) row[b] = list;
      else {
        const s = groupStats(list.map((p) => p.value).filter((v): v is number => typeof v === 'number'));
        row[b] = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, r4(v)])) as unknown as GroupStats;
      }
    }
    out[a] = row;
  }
  return out;
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** RFC 4180 CSV, columns in first-seen order across all points. */
export function toCsv(points: readonly Point[]): string {
  const cols: string[] = [];
  const seen = new Set<string>();
  for (const p of points) {
    for (const k of Object.keys(p)) {
      if (seen.has(k)) continue;
      seen.add(k);
      cols.push(k);
    }
  }
  const lines = [cols.join(',')];
  for (const p of points) lines.push(cols.map((c) => csvCell(p[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
