import { z } from 'zod';
import { ksuidFor, secretFor, stableId } from '../core/ids.js';
import { localToEpoch, parseDuration } from '../core/time.js';
import type { Finding, Seg } from './diagnostics.js';
import type { ClientModel, Fidelity, NoiseModel, OrganisationModel, ScenarioModel, UserModel } from './model.js';
import {
  claimId,
  emptyLists,
  error,
  NameSet,
  parseAt,
  rawList,
  rawName,
  warn,
  type Ctx,
  type SensorDefaults,
} from './resolve-context.js';
import { parseExpectation } from './expectations.js';
import { resolveFloor } from './resolve-floor.js';
import { resolveFaults, resolveNetwork } from './resolve-network.js';
import { defaultFidelity, resolveThermal } from './resolve-thermal.js';
import { webhookFaultsModel } from './webhook-faults-schema.js';
import { webhookStormModel } from './webhook-storm-schema.js';
import { canonicalEventType } from '../core/event-types.js';
import { rampModel } from './ramp.js';
import {
  buildingSchema,
  fileSchema,
  MAX_ORGANISATIONS,
  organizationEntrySchema,
  siteSchema,
  type ScenarioFile,
} from './schema.js';

/** Values that replace the file's (CLI flags). */
export interface Overrides {
  /** The file's own `start` when another replaces it: seeded ids keep depending on the file and the seed only. */
  fileStart?: string;
  seed?: number;
  durationMs?: number;
  fidelity?: Fidelity;
}

export interface Resolution {
  model: ScenarioModel;
  findings: Finding[];
}

// Sites and organisations are resolved one by one (located findings), so the header takes them as they come.
const headerSchema = fileSchema.extend({
  sites: z.array(z.unknown()).min(1).optional(),
  organizations: z.array(z.unknown()).min(1).optional(),
});
const organizationOwnSchema = organizationEntrySchema.extend({ sites: z.array(z.unknown()).min(1) });
const siteOwnSchema = siteSchema.extend({ buildings: z.array(z.unknown()).min(1) });
const buildingOwnSchema = buildingSchema.extend({ floors: z.array(z.unknown()).min(1) });

type Header = z.output<typeof headerSchema>;

/**
 * Turns the expanded tree into the model, checking every rule. The model is only meaningful
 * when no finding is an error; it is returned anyway so callers can count what was built.
 */
export function resolveScenario(
  tree: unknown,
  file: string,
  overrides: Overrides,
  pointerOf: (p: readonly Seg[]) => string,
): Resolution {
  const findings: Finding[] = [];
  const probe: Ctx = {
    findings,
    pointerOf,
    seed: 1,
    orgName: '',
    tickMs: 1000,
    defaults: sensorDefaults(undefined),
    lists: emptyLists(),
    ids: new Map(),
    macs: new Set(),
  };
  const header = parseAt(probe, headerSchema, tree, []);
  const seed = overrides.seed ?? header?.seed ?? 1;
  const ctx: Ctx = {
    ...probe,
    seed,
    orgName: 'org',
    tickMs: durationOr(header?.tick, 1000),
    defaults: sensorDefaults(header?.sensor_defaults),
  };
  const declared = declaredOrganisations(ctx, header, tree);
  const owned = declared.map((o) => ({ o, siteIds: resolveSites(ctx, o) }));
  const firstZone = ctx.lists.sites[0]?.timezone ?? 'UTC';
  const startMs = header === null ? 0 : startOf(ctx, header, firstZone);
  const durationMs = overrides.durationMs ?? durationOr(header?.duration, 0);
  if (header !== null && durationMs <= 0) error(ctx, ['duration'], 'duration must be > 0');
  const batchIntervalMs = durationOr(header?.batch_interval, 10_000);
  if (header !== null) checkIntervals(ctx, batchIntervalMs);
  const model: ScenarioModel = {
    version: 1,
    name: header?.name ?? '',
    file,
    seed,
    startMs,
    durationMs,
    fidelity: overrides.fidelity ?? header?.fidelity ?? defaultFidelity(header?.thermal, ctx.lists.sensors.length),
    tickMs: ctx.tickMs,
    batchIntervalMs,
    noise: noiseOf(header?.noise),
    org: { id: stableId('org', declared[0]?.name ?? 'org'), name: declared[0]?.name ?? 'org' },
    ...ctx.lists,
    // Client ids are seeded by the file's own start, so `--start` does not change them.
    ...organisations(
      ctx,
      owned,
      overrides.fileStart === undefined ? startMs : (localToEpoch(overrides.fileStart, firstZone) ?? startMs),
    ),
    network: resolveNetwork(header?.network),
    thermal: resolveThermal(ctx, header?.thermal),
    faults: resolveFaults(ctx, header?.faults, startMs),
    ...(header?.ramp !== undefined ? { ramp: rampModel(header.ramp) } : {}),
    ...webhooksOf(ctx, header),
    ...expectationsOf(header),
  };
  return { model, findings };
}

/** The `expect:` thresholds, already checked by the schema. */
function expectationsOf(header: Header | null): Pick<ScenarioModel, 'expect'> {
  if (!header?.expect) return {};
  return {
    expect: header.expect.flatMap((text) => {
      const r = parseExpectation(text);
      return r.ok ? [r.expectation] : [];
    }),
  };
}

/**
 * The widest block a file's `webhook_allow` may hold, per family: a /8 (127.0.0.0/8,
 * 10.0.0.0/8) and fc00::/7 are the widest private ranges. A wider one — 0.0.0.0/0, ::/0, two
 * /1 halves — switches the address guard off for every organisation of the platform (issue 33
 * item 11), which is the operator's call on the command line (`--webhook-allow`), not a file's.
 * Only the prefix length is read here; whether the text is a block at all the platform's
 * address policy says (webhooks/address-policy.ts).
 */
const WIDEST_FILE_PREFIX: Readonly<Record<4 | 6, number>> = { 4: 8, 6: 7 };

/** Why a file may not allow `text` (null: it may, or it is not a block — the policy says so). */
export function fileAllowProblem(text: string): string | null {
  const m = /^\s*([^/\s]+)\/(\d{1,3})\s*$/.exec(text);
  if (!m) return null;
  const family = (m[1] as string).includes(':') ? 6 : 4;
  const bits = Number(m[2]);
  if (bits >= WIDEST_FILE_PREFIX[family]) return null;
  const what =
    bits === 0 ? 'every address' : `a /${bits}, wider than any private range (/${WIDEST_FILE_PREFIX[family]})`;
  return `${JSON.stringify(text)} allows ${what}: the address guard protects every organisation, so only the operator may switch it off — pass it on the command line (occusim run/serve --webhook-allow)`;
}

/** The `webhooks:` entries as the model holds them (their meaning is checked by the platform). */
function webhooksOf(ctx: Ctx, header: Header | null): Pick<ScenarioModel, 'webhooks' | 'webhookAllow'> {
  if (!header?.webhooks && !header?.webhook_allow) return {};
  if (header.organizations && header.webhooks) {
    // A subscription belongs to one organisation; which one a shared list means is not said.
    error(
      ctx,
      ['webhooks'],
      'a file of several organizations cannot declare webhooks yet: create them per organisation with the GraphQL createWebhooks mutation',
    );
  }
  // A file's allow list reaches every organisation: one covering everything is the operator's to give.
  for (const [i, text] of (header.webhook_allow ?? []).entries()) {
    const why = fileAllowProblem(text);
    if (why !== null) error(ctx, ['webhook_allow', i], why);
  }
  // A storm's types are among its subscription's: the storm is that subscription's traffic.
  for (const [i, w] of (header.webhooks ?? []).entries()) {
    const mine = new Set(w.event_types.map(canonicalEventType));
    for (const [j, t] of (w.storm?.types ?? []).entries())
      if (!mine.has(canonicalEventType(t)))
        error(
          ctx,
          ['webhooks', i, 'storm', 'types', j],
          `${t} is not among the subscription's event_types (${w.event_types.join(', ')})`,
        );
  }
  return {
    webhooks: (header.webhooks ?? []).map((w, i) => ({
      name: w.name ?? `webhook-${i + 1}`,
      url: w.url,
      eventTypes: w.event_types,
      filters: w.filters ? (w.filters as Record<string, string[]>) : null,
      secret: w.secret ?? null,
      sendOnValueChange: w.send_on_value_change ?? false,
      httpTimeoutS: w.http_timeout ?? null,
      ...(w.concurrency !== undefined ? { concurrency: w.concurrency } : {}),
      ...(w.faults !== undefined ? { faults: webhookFaultsModel(w.faults) } : {}),
      ...(w.storm !== undefined ? { storm: webhookStormModel(w.storm) } : {}),
      src: ctx.pointerOf(['webhooks', i]),
    })),
    webhookAllow: header.webhook_allow ?? [],
  };
}

/**
 * An organisation as the file declares it: `organization:` with the file's `sites:`, or one
 * entry of `organizations:`. `path` locates the organisation, `sitesPath` its sites.
 */
interface DeclaredOrganisation {
  name: string;
  path: Seg[];
  sitesPath: Seg[];
  sites: unknown[];
  users: NonNullable<ScenarioFile['organization']>['users'];
  clients: NonNullable<ScenarioFile['organization']>['clients'];
}

/** The file's organisations, in order; a file gives one (`organization` + `sites`) or several (`organizations`), never both. */
function declaredOrganisations(ctx: Ctx, header: Header | null, tree: unknown): DeclaredOrganisation[] {
  const raw = (tree as Record<string, unknown> | null) ?? {};
  if (header?.organizations !== undefined) {
    if (header.organization !== undefined || header.sites !== undefined) {
      error(
        ctx,
        ['organizations'],
        'a file gives either `organization` and `sites` (one organisation) or `organizations` (several), not both',
      );
    }
    const list = rawList(raw['organizations']);
    // Refused before resolving any: a file of 3,000 would cost seconds to explain one error.
    if (list.length > MAX_ORGANISATIONS) {
      error(
        ctx,
        ['organizations'],
        `${list.length} organizations: a file declares at most ${MAX_ORGANISATIONS} (each is served by this one process)`,
      );
      return [];
    }
    const names = new NameSet('organization', 'the file');
    return list.flatMap((o, i): DeclaredOrganisation[] => {
      const path: Seg[] = ['organizations', i];
      const own = parseAt(ctx, organizationOwnSchema, o, path);
      const name = own?.name ?? rawName(o) ?? `#${i}`;
      if (!names.add(ctx, name, i, path)) return [];
      claimId(ctx, stableId('org', name), path, `organization \`${name}\``);
      return [
        {
          name,
          path,
          sitesPath: [...path, 'sites'],
          sites: rawList((o as Record<string, unknown> | null)?.['sites']),
          users: own?.users,
          clients: own?.clients,
        },
      ];
    });
  }
  if (header !== null) {
    for (const field of ['organization', 'sites'] as const) {
      if (header[field] === undefined)
        error(
          ctx,
          [field],
          `missing required field \`${field}\` (or \`organizations\`, a list of organisations each with its sites)`,
        );
    }
  }
  const name = header?.organization?.name ?? 'org';
  return [
    {
      name,
      path: ['organization'],
      sitesPath: ['sites'],
      sites: rawList(raw['sites']),
      users: header?.organization?.users,
      clients: header?.organization?.clients,
    },
  ];
}

/**
 * Resolves an organisation's sites (ids carry its name); returns their ids. The context is
 * the one of the whole file (steps keep per-file state keyed by it), pointed at this
 * organisation while its sites are resolved.
 */
function resolveSites(ctx: Ctx, o: DeclaredOrganisation): string[] {
  ctx.orgName = o.name;
  const names = new NameSet('site', o.path.length === 1 ? 'the organization' : `organization \`${o.name}\``);
  const before = ctx.lists.sites.length;
  o.sites.forEach((raw, i) => resolveSite(ctx, raw, [...o.sitesPath, i], names, i));
  return ctx.lists.sites.slice(before).map((site) => site.id);
}

/**
 * Every organisation's users and clients (the model's lists hold all of them) and, for a file
 * of several, which belong to which. User names log in, so they are unique across
 * organisations, ignoring case as login does.
 */
function organisations(
  ctx: Ctx,
  owned: Array<{ o: DeclaredOrganisation; siteIds: string[] }>,
  startMs: number,
): Pick<ScenarioModel, 'users' | 'clients' | 'organisations'> {
  const logins = new Map<string, string>();
  const all = owned.map(({ o, siteIds }) => {
    const us = users(ctx, o, logins);
    const cs = clients(ctx, o, startMs);
    const org: OrganisationModel = {
      id: stableId('org', o.name),
      name: o.name,
      siteIds,
      userIds: us.map((u) => u.id),
      clientIds: cs.map((c) => c.clientId),
      src: ctx.pointerOf(o.path),
    };
    return { us, cs, org };
  });
  return {
    users: all.flatMap((x) => x.us),
    clients: all.flatMap((x) => x.cs),
    ...(owned[0]?.o.path[0] === 'organizations' ? { organisations: all.map((x) => x.org) } : {}),
  };
}

function resolveSite(ctx: Ctx, raw: unknown, path: Seg[], names: NameSet, index: number): void {
  const own = parseAt(ctx, siteOwnSchema, raw, path);
  const name = own?.name ?? rawName(raw) ?? `#${index}`;
  if (own !== null && !names.add(ctx, name, index, path)) return;
  const site = {
    id: stableId('site', ctx.orgName, name),
    name,
    customId: own?.custom_id ?? null,
    siteNumber: own?.site_number ?? null,
    timezone: own?.timezone ?? 'UTC',
    buildingIds: [] as string[],
    src: ctx.pointerOf(path),
  };
  claimId(ctx, site.id, path, `site \`${name}\``);
  ctx.lists.sites.push(site);
  const buildingNames = new NameSet('building', `site \`${name}\``);
  rawList((raw as Record<string, unknown> | null)?.['buildings']).forEach((b, i) => {
    const id = resolveBuilding(ctx, b, [...path, 'buildings', i], site, buildingNames, i);
    if (id !== null) site.buildingIds.push(id);
  });
}

function resolveBuilding(
  ctx: Ctx,
  raw: unknown,
  path: Seg[],
  site: { id: string; name: string },
  names: NameSet,
  index: number,
): string | null {
  const own = parseAt(ctx, buildingOwnSchema, raw, path);
  const name = own?.name ?? rawName(raw) ?? `#${index}`;
  if (own !== null && !names.add(ctx, name, index, path)) return null;
  const building = {
    id: stableId('building', ctx.orgName, site.name, name),
    name,
    siteId: site.id,
    customId: own?.custom_id ?? null,
    buildingNumber: own?.building_number ?? null,
    capacity: own?.capacity ?? null,
    address: own?.address === undefined ? null : { lines: own.address.lines, country: own.address.country ?? null },
    floorIds: [] as string[],
    src: ctx.pointerOf(path),
  };
  claimId(ctx, building.id, path, `building \`${name}\``);
  ctx.lists.buildings.push(building);
  const floorNames = new NameSet('floor', `building \`${name}\``);
  const parent = { siteId: site.id, buildingId: building.id, names: [ctx.orgName, site.name, name] };
  rawList((raw as Record<string, unknown> | null)?.['floors']).forEach((f, i) => {
    const fpath = [...path, 'floors', i];
    const fname = rawName(f);
    if (fname !== null && !floorNames.add(ctx, fname, i, fpath)) return;
    building.floorIds.push(resolveFloor(ctx, f, fpath, parent));
  });
  return building.id;
}

function startOf(ctx: Ctx, header: Header, zone: string): number {
  const ms = localToEpoch(header.start, zone);
  if (ms === null) {
    error(
      ctx,
      ['start'],
      `bad start time ${JSON.stringify(header.start)}: expected a local date-time like 2026-03-02T08:00`,
    );
    return 0;
  }
  return ms;
}

function checkIntervals(ctx: Ctx, batchMs: number): void {
  if (ctx.tickMs <= 0) error(ctx, ['tick'], 'tick must be > 0');
  if (batchMs <= 0) error(ctx, ['batch_interval'], 'batch_interval must be > 0');
  else if (batchMs < ctx.tickMs)
    warn(ctx, ['batch_interval'], `batch_interval is shorter than the tick (${ctx.tickMs} ms)`);
}

function durationOr(text: string | undefined, fallback: number): number {
  return text === undefined ? fallback : (parseDuration(text) ?? fallback);
}

function sensorDefaults(d: ScenarioFile['sensor_defaults']): SensorDefaults {
  return {
    model: d?.model ?? 'tp-32x32',
    height: d?.height ?? 3.0,
    orientation: d?.orientation ?? 0,
    fieldOfView: d?.field_of_view ?? 60,
    sensitivity: d?.sensitivity ?? 3,
    presenceReportMs: durationOr(d?.report_interval, 1000),
    trafficReportMs: durationOr(d?.traffic_report_interval, 10_000),
    ...(d?.fps !== undefined ? { fps: d.fps } : {}),
  };
}

function noiseOf(n: ScenarioFile['noise']): NoiseModel {
  return {
    presence: {
      miss: n?.presence?.miss ?? 0.01,
      falsePositive: n?.presence?.false_positive ?? 0.002,
      jitterM: n?.presence?.jitter_m ?? 0.08,
    },
    traffic: { miss: n?.traffic?.miss ?? 0.02, crowdMiss: n?.traffic?.crowd_miss ?? 0.15 },
  };
}

function users(ctx: Ctx, o: DeclaredOrganisation, logins: Map<string, string>): UserModel[] {
  const names = new NameSet('user', o.path.length === 1 ? 'the organization' : `organization \`${o.name}\``);
  const out: UserModel[] = [];
  (o.users ?? []).forEach((u, i) => {
    const path = [...o.path, 'users', i];
    if (!names.add(ctx, u.username, i, path)) return;
    const first = logins.get(u.username.toLowerCase());
    if (first !== undefined) {
      error(
        ctx,
        [...path, 'username'],
        `user name \`${u.username}\` is already used by ${first}: user names log in, so they are unique across organizations (ignoring case)`,
      );
      return;
    }
    logins.set(u.username.toLowerCase(), `a user of organization \`${o.name}\``);
    out.push({
      id: stableId('user', o.name, u.username),
      username: u.username,
      password: u.password ?? secretFor(ctx.seed, 'user', o.name, u.username),
      src: ctx.pointerOf(path),
    });
  });
  return out;
}

function clients(ctx: Ctx, o: DeclaredOrganisation, startMs: number): ClientModel[] {
  const names = new NameSet('client', o.path.length === 1 ? 'the organization' : `organization \`${o.name}\``);
  const out: ClientModel[] = [];
  (o.clients ?? []).forEach((c, i) => {
    const path = [...o.path, 'clients', i];
    if (!names.add(ctx, c.name, i, path)) return;
    out.push({
      clientId: `client_${ksuidFor(startMs, `${o.name}/${c.name}`)}`,
      name: c.name,
      description: c.description ?? '',
      secret: c.secret ?? secretFor(ctx.seed, 'client', o.name, c.name),
      src: ctx.pointerOf(path),
    });
  });
  return out;
}
