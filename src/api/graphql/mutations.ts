import { nameProblem } from '../text-fields.js';
import { gqlError, mustGet, need, type GqlContext } from './context.js';
import { sensorViews } from './views.js';

/**
 * Mutations (spec §4.3; platform-reference §2). Inputs name ids of the caller's
 * organisation; any other id is NOT_FOUND, exactly as an id that does not exist.
 */
export interface SiteInput {
  id: string;
  name?: string | null;
  customID?: string | null;
  siteNumber?: string | null;
}
export interface BuildingInput {
  id: string;
  name?: string | null;
  customID?: string | null;
  buildingNumber?: string | null;
  capacityMax?: number | null;
  capacityMid?: number | null;
}
export interface FloorInput {
  id: string;
  name?: string | null;
  customID?: string | null;
}

function nonEmpty(name: string | null | undefined, field: string): string | undefined {
  if (name === undefined || name === null) return undefined;
  const problem = nameProblem(name, field);
  if (problem !== null) throw gqlError('BAD_USER_INPUT', problem);
  return name.trim();
}

/** Only the fields the input sets: the catalogue records what changed. */
function defined<T extends object>(patch: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

export interface SpaceInput {
  id: string;
  name?: string | null;
  customID?: string | null;
}

/** A list of room or zone renames, validated whole before the catalogue changes. */
function updateSpaces<K extends 'room' | 'zone'>(ctx: GqlContext, kind: K, input: readonly SpaceInput[]) {
  const plans = input.map((u) => ({
    item: mustGet(ctx, kind, u.id),
    patch: defined({ name: nonEmpty(u.name, 'name'), customId: u.customID }),
  }));
  return plans.map(({ item, patch }) => ctx.assets.update(kind, ctx.principal.orgId, item.id, patch as never) ?? item);
}

export const mutationResolvers = {
  updateSiteInfo(_: unknown, { input }: { input: SiteInput }, ctx: GqlContext) {
    need(ctx, 'write:spaces');
    const site = mustGet(ctx, 'site', input.id);
    ctx.assets.update(
      'site',
      ctx.principal.orgId,
      site.id,
      defined({ name: nonEmpty(input.name, 'name'), customId: input.customID, siteNumber: input.siteNumber }),
    );
    return { site };
  },

  updateBuildingInfo(_: unknown, { input }: { input: BuildingInput }, ctx: GqlContext) {
    need(ctx, 'write:spaces');
    const b = mustGet(ctx, 'building', input.id);
    let capacity = b.capacity;
    if (input.capacityMax != null || input.capacityMid != null) {
      const max = input.capacityMax ?? b.capacity?.max ?? 0;
      const mid = input.capacityMid ?? b.capacity?.mid ?? 0;
      if (max < 0 || mid < 0 || mid > max) throw gqlError('BAD_USER_INPUT', 'capacity needs 0 <= mid <= max');
      capacity = { max, mid };
    }
    ctx.assets.update(
      'building',
      ctx.principal.orgId,
      b.id,
      defined({
        name: nonEmpty(input.name, 'name'),
        customId: input.customID,
        buildingNumber: input.buildingNumber,
        capacity,
      }),
    );
    return { building: b };
  },

  updateFloorInfo(_: unknown, { input }: { input: FloorInput }, ctx: GqlContext) {
    need(ctx, 'write:spaces');
    const f = mustGet(ctx, 'floor', input.id);
    ctx.assets.update(
      'floor',
      ctx.principal.orgId,
      f.id,
      defined({ name: nonEmpty(input.name, 'name'), customId: input.customID }),
    );
    return { floor: f };
  },

  updateRooms(_: unknown, { input }: { input: SpaceInput[] }, ctx: GqlContext) {
    need(ctx, 'write:rooms');
    return updateSpaces(ctx, 'room', input);
  },

  updateZones(_: unknown, { input }: { input: SpaceInput[] }, ctx: GqlContext) {
    need(ctx, 'write:rooms');
    return updateSpaces(ctx, 'zone', input);
  },

  updateSensors(_: unknown, { sensors }: { sensors: Array<{ sensor_id: string; name: string }> }, ctx: GqlContext) {
    need(ctx, 'write:sensors');
    // Validate everything first: a batch applies entirely or not at all.
    const found = sensors.map((u) => {
      const s = mustGet(ctx, 'sensor', u.sensor_id);
      return { s, name: nonEmpty(u.name, 'name') as string };
    });
    for (const { s, name } of found) ctx.assets.update('sensor', ctx.principal.orgId, s.id, { name });
    return sensorViews(
      ctx,
      found.map(({ s }) => s),
    );
  },

  // `ids: [String!]` as the spec writes it (§4.3), so a document typed `$ids: [String!]`
  // validates; no list (null or omitted) deletes nothing.
  deleteSensors(_: unknown, args: { ids?: string[] | null }, ctx: GqlContext) {
    if (!ctx.principal.operator)
      throw gqlError('FORBIDDEN', "deleteSensors is restricted to the operator's internal use");
    need(ctx, 'delete:sensors');
    const ids = args.ids ?? [];
    for (const id of ids) mustGet(ctx, 'sensor', id);
    // Views before deleting: a deleted sensor's hive serial is still looked up.
    const views = sensorViews(
      ctx,
      ids.map((id) => mustGet(ctx, 'sensor', id)),
    );
    for (const id of ids) ctx.assets.deleteSensor(ctx.principal.orgId, id);
    return views;
  },

  createTag(_: unknown, { input }: { input: { name: string } }, ctx: GqlContext) {
    need(ctx, 'write:spaces');
    return ctx.assets.createTag(ctx.principal.orgId, nonEmpty(input.name, 'name') as string);
  },

  associateTag(_: unknown, { input }: { input: { ids: string[]; tag_id: string } }, ctx: GqlContext) {
    need(ctx, 'write:spaces');
    const tag = tagAndSpaces(ctx, input);
    return ctx.assets.tagSpaces(ctx.principal.orgId, tag.id, input.ids, true);
  },

  disassociateTag(_: unknown, { input }: { input: { ids: string[]; tag_id: string } }, ctx: GqlContext) {
    need(ctx, 'write:spaces');
    const tag = tagAndSpaces(ctx, input);
    return ctx.assets.tagSpaces(ctx.principal.orgId, tag.id, input.ids, false);
  },
};

function tagAndSpaces(ctx: GqlContext, input: { ids: string[]; tag_id: string }) {
  const tag = ctx.assets.tag(ctx.principal.orgId, input.tag_id);
  if (!tag) throw gqlError('NOT_FOUND', `tag ${input.tag_id} does not exist`);
  for (const id of input.ids)
    if (!ctx.assets.isSpace(ctx.principal.orgId, id))
      throw gqlError('NOT_FOUND', `floor, room or zone ${id} does not exist`);
  return tag;
}
