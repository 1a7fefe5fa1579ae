import type { z } from 'zod';
import type { Finding, Seg } from './diagnostics.js';
import { issuesToFindings } from './issues.js';
import type { ScenarioModel, SensorModelName } from './model.js';

/**
 * State shared by the resolution steps: where findings go, the model under construction,
 * and the global registries (ids, MACs) that must stay unique across the whole fleet.
 */
export type ModelLists = Pick<
  ScenarioModel,
  'sites' | 'buildings' | 'floors' | 'rooms' | 'zones' | 'doors' | 'hives' | 'sensors' | 'populations' | 'meetings'
>;

export interface SensorDefaults {
  model: SensorModelName;
  height: number;
  orientation: number;
  fieldOfView: number;
  sensitivity: number;
  presenceReportMs: number;
  trafficReportMs: number;
  /** Frames per second at frame fidelity; absent: by mode (docs/edge.md). */
  fps?: number;
}

export interface Ctx {
  findings: Finding[];
  /** JSON pointer of the file node an expanded path came from (the `src` of entities). */
  pointerOf(path: readonly Seg[]): string;
  seed: number;
  orgName: string;
  tickMs: number;
  defaults: SensorDefaults;
  lists: ModelLists;
  /** Every id handed out, to catch two entities that resolve to the same id. */
  ids: Map<string, string>;
  macs: Set<string>;
}

export function emptyLists(): ModelLists {
  return {
    sites: [],
    buildings: [],
    floors: [],
    rooms: [],
    zones: [],
    doors: [],
    hives: [],
    sensors: [],
    populations: [],
    meetings: [],
  };
}

export function error(ctx: Pick<Ctx, 'findings'>, path: readonly Seg[], message: string): void {
  ctx.findings.push({ path, message, severity: 'error' });
}

export function warn(ctx: Ctx, path: readonly Seg[], message: string): void {
  ctx.findings.push({ path, message, severity: 'warning' });
}

/** Parses one node of the expanded tree; structural problems become findings at `path`. */
export function parseAt<S extends z.ZodType>(
  ctx: Ctx,
  schema: S,
  raw: unknown,
  path: readonly Seg[],
): z.output<S> | null {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  ctx.findings.push(...issuesToFindings(r.error.issues, raw, path));
  // Unknown fields of the item itself are already reported: check the rest of the item
  // without them, so a typo does not hide its other problems.
  const unknown = r.error.issues.every((i) => i.code === 'unrecognized_keys' && i.path.length === 0);
  if (!unknown || typeof raw !== 'object' || raw === null) return null;
  const drop = new Set(r.error.issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys : [])));
  const again = schema.safeParse(Object.fromEntries(Object.entries(raw).filter(([k]) => !drop.has(k))));
  return again.success ? again.data : null;
}

/** Records an id; a second entity with the same id is an error at its path. */
export function claimId(ctx: Ctx, id: string, path: readonly Seg[], what: string): void {
  const first = ctx.ids.get(id);
  if (first !== undefined) error(ctx, [...path, 'name'], `duplicate id ${id} for ${what} (also used by ${first})`);
  else ctx.ids.set(id, what);
}

/** Tracks names within one parent; reports the second use of a name. */
export class NameSet {
  readonly #first = new Map<string, number>();

  constructor(
    readonly kind: string,
    readonly parent: string,
  ) {}

  add(ctx: Ctx, name: string, index: number, path: readonly Seg[]): boolean {
    const first = this.#first.get(name);
    if (first !== undefined) {
      error(
        ctx,
        [...path, 'name'],
        `duplicate ${this.kind} name \`${name}\` in ${this.parent} (first used by item ${first})`,
      );
      return false;
    }
    this.#first.set(name, index);
    return true;
  }
}

/** The `name` of a raw item, when it has one (used before the item is validated). */
export function rawName(item: unknown): string | null {
  if (typeof item !== 'object' || item === null) return null;
  const n = (item as Record<string, unknown>)['name'];
  return typeof n === 'string' || typeof n === 'number' ? String(n) : null;
}

export function rawList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
