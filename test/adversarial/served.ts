import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';
import { buildApi } from '../../src/api/app.js';
import { ALL_SCOPES } from '../../src/api/auth/scopes.js';
import { TokenService, type SigningKey } from '../../src/api/auth/tokens.js';
import { DEFAULT_LIMITS } from '../../src/api/graphql/limits.js';
import { catalogueListSizes } from '../../src/api/graphql/list-sizes.js';
import { storeSeries } from '../../src/api/reporting/store-series.js';
import { apiServices, DEFAULT_AUDIENCE } from '../../src/api/server.js';
import { SqliteApiState } from '../../src/store/sqlite-api-state.js';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { sqliteStore, sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { mcpApiExtension } from '../../src/mcp/http-plugin.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { OrganisationModel, ScenarioModel } from '../../src/scenario/model.js';
import { startWebhooks, type PlatformWebhooks } from '../../src/webhooks/platform-hooks.js';

/**
 * The platform's API as `occusim run --serve` serves it — store-backed reporting and stats,
 * device status, persisted state, webhooks, the MCP endpoint — over scenarios/two-tenants.yaml
 * after a 30-minute run, so both organisations have stored occupancy. Built in-process so the
 * suite knows the signing key (the token corpus signs with it) and can use cheap password
 * hashing; listening on a free port because the MCP tools call the API over HTTP.
 */
export const ISSUER = 'https://auth.occusim.local/';
export const AUDIENCE = DEFAULT_AUDIENCE;
const TEST_COST = { N: 2 ** 10, r: 8, p: 1 };
const RUN_MS = 30 * 60_000;

export interface Tenant {
  org: OrganisationModel;
  clientId: string;
  secret: string;
  token: string;
  /** Every id, serial, MAC and name of this organisation (what the other must never see). */
  secrets: Set<string>;
  ids: {
    site: string;
    building: string;
    floor: string;
    room: string;
    zone: string;
    door: string | null;
    hive: string;
    sensor: string;
    serial: string;
    mac: string;
  };
}

export interface Served {
  app: FastifyInstance;
  url: string;
  model: ScenarioModel;
  clock: VirtualClock;
  key: SigningKey;
  tokens: TokenService;
  hooks: PlatformWebhooks;
  a: Tenant;
  b: Tenant;
  sign(header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export function twoTenantsModel(): ScenarioModel {
  const r = loadScenarioFile(new URL('../../scenarios/two-tenants.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('two-tenants.yaml does not load');
  return r.model;
}

export async function servedTwoTenants(): Promise<Served> {
  const model = twoTenantsModel();
  const dir = mkdtempSync(join(tmpdir(), 'occusim-adversarial-'));
  const dbPath = join(dir, 'store.sqlite');
  await runScenario(model, { durationMs: RUN_MS, dbPath, mqttPort: 0, platformThread: false });
  // The API's clock: the run's end, as a served finished run reads "now".
  const clock = new VirtualClock(model.startMs + RUN_MS);
  const catalogue = catalogueFromScenario(model);
  const store = sqliteStore(dbPath);
  const state = new SqliteApiState(dbPath);
  const series = storeSeries(store, catalogue);
  // Loopback allowed: the isolation matrix receives deliveries on a local port.
  const hooks = await startWebhooks(
    { webhooks: sqliteWebhookStore(dbPath), events: sqliteStore(dbPath) },
    catalogue,
    clock,
    { seed: 16, allow: ['127.0.0.1/32'] },
  );
  const pair = await generateKeyPair('ES256', { extractable: true });
  const key: SigningKey = { ...pair, kid: 'adversarial-key' };
  const tokens = await TokenService.create(
    { issuer: ISSUER, audience: AUDIENCE, accessTtlS: 3600, refreshTtlS: 86_400, clock },
    key,
  );
  const { accounts, assets } = await apiServices(catalogue, clock, state, TEST_COST);
  const app = await buildApi({
    assets,
    accounts,
    tokens,
    clock,
    introspection: true,
    limits: { ...DEFAULT_LIMITS, listSize: catalogueListSizes(assets) },
    series,
    state,
    status: store,
    extensions: [mcpApiExtension],
    webhooks: hooks.service,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const tenant = async (org: OrganisationModel): Promise<Tenant> => {
    const client = model.clients.find((c) => org.clientIds.includes(c.clientId));
    if (!client) throw new Error(`${org.name} has no client`);
    const res = await app.inject({
      method: 'POST',
      url: '/api/v2/clients/login',
      payload: {
        client_id: client.clientId,
        client_secret: client.secret,
        audience: AUDIENCE,
        grant_type: 'client_credentials',
      },
    });
    const token = (res.json() as { access_token: string }).access_token;
    const floors = new Set(model.floors.filter((f) => org.siteIds.includes(f.siteId)).map((f) => f.id));
    const of = <T extends { floorId: string }>(xs: T[]): T[] => xs.filter((x) => floors.has(x.floorId));
    const sites = model.sites.filter((s) => org.siteIds.includes(s.id));
    const buildings = model.buildings.filter((b) => org.siteIds.includes(b.siteId));
    const [rooms, zones, doors, hives, sensors] = [
      of(model.rooms),
      of(model.zones),
      of(model.doors),
      of(model.hives),
      of(model.sensors),
    ];
    const secrets = new Set<string>([
      org.id,
      ...org.clientIds,
      ...[...sites, ...buildings, ...rooms, ...zones, ...doors, ...hives, ...sensors].map((x) => x.id),
      ...floors,
      ...hives.map((h) => h.serial),
      ...sensors.map((s) => s.mac),
      ...model.users.filter((u) => org.userIds.includes(u.id)).map((u) => u.username),
    ]);
    return {
      org,
      clientId: client.clientId,
      secret: client.secret,
      token,
      secrets,
      ids: {
        site: sites[0]!.id,
        building: buildings[0]!.id,
        floor: [...floors][0]!,
        room: rooms[0]!.id,
        zone: zones[0]!.id,
        door: doors[0]?.id ?? null,
        hive: hives[0]!.id,
        sensor: sensors[0]!.id,
        serial: hives[0]!.serial,
        mac: sensors[0]!.mac,
      },
    };
  };
  const [orgA, orgB] = model.organisations ?? [];
  const a = await tenant(orgA!);
  const b = await tenant(orgB!);
  return {
    app,
    url,
    model,
    clock,
    key,
    tokens,
    hooks,
    a,
    b,
    sign: (header, payload) =>
      new SignJWT(payload).setProtectedHeader({ alg: 'ES256', ...header }).sign(key.privateKey),
    close: async () => {
      await app.close();
      await hooks.close();
      await state.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Claims of a valid client token of this tenant, to be spoiled one at a time. */
let jtiCounter = 0;
export function claimsOf(s: Served, t: Tenant): Record<string, unknown> {
  const now = Math.floor(s.clock.now() / 1000);
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: t.clientId,
    client_id: t.clientId,
    org_id: t.org.id,
    scope: ALL_SCOPES.join(' '),
    iat: now,
    exp: now + 600,
    jti: `jti-${now}-${++jtiCounter}`,
  };
}
