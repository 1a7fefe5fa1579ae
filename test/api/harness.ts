import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/app.js';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { AccountService } from '../../src/api/auth/accounts.js';
import { generateKeyPair, SignJWT } from 'jose';
import { TokenService, type Principal, type SigningKey } from '../../src/api/auth/tokens.js';
import type { SeriesPort } from '../../src/api/reporting/series.js';
import type { ApiStatePort } from '../../src/api/state/port.js';
import { ALL_SCOPES } from '../../src/api/auth/scopes.js';
import { VirtualClock } from '../../src/core/clock.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/** Two organisations (quickstart's Acme and office-day's Globex) behind one API, in-process. */
export const AUDIENCE = 'https://api.occusim.test';
export const ISSUER = 'https://auth.occusim.test/';
// Cheap hashing for tests only; the OWASP cost is covered by passwords.test.ts.
export const TEST_COST = { N: 2 ** 10, r: 8, p: 1 };

function load(name: string): ScenarioModel {
  const r = loadScenarioFile(new URL(`../../scenarios/${name}`, import.meta.url).pathname);
  if (!r.ok) throw new Error(`${name} does not load`);
  return r.model;
}

export interface Harness {
  app: FastifyInstance;
  a: ScenarioModel;
  b: ScenarioModel;
  tokens: TokenService;
  clock: VirtualClock;
  key: SigningKey;
  /** Signs arbitrary claims with the API's own key (for the negative corpus). */
  sign(header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string>;
  /** Access token of org A's first client (client-credentials login). */
  tokenA: string;
  tokenB: string;
  tokenFor(p: Partial<Principal> & { orgId: string }): Promise<string>;
  gql(
    token: string,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<{
    status: number;
    body: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  }>;
}

/** `state`: where the API keeps what it changes (clients, overlays); none: memory only. */
export async function harness(series?: SeriesPort, state?: ApiStatePort): Promise<Harness> {
  const a = load('quickstart.yaml');
  const b = load('office-day.yaml');
  const clock = new VirtualClock(Date.UTC(2026, 10, 22, 12));
  const pair = await generateKeyPair('ES256', { extractable: true });
  const key = { ...pair, kid: 'test-key' };
  const tokens = await TokenService.create(
    { issuer: ISSUER, audience: AUDIENCE, accessTtlS: 3600, refreshTtlS: 86_400, clock },
    key,
  );
  const accounts = await AccountService.fromCatalogue(catalogueFromScenario(a, b), clock, TEST_COST, state ?? null);
  const app = await buildApi({
    assets: catalogueFromScenario(a, b),
    accounts,
    tokens,
    clock,
    ...(series ? { series } : {}),
    ...(state ? { state } : {}),
  });
  const login = async (m: ScenarioModel): Promise<string> => {
    const c = m.clients[0];
    if (!c) throw new Error('scenario has no client');
    const res = await app.inject({
      method: 'POST',
      url: '/api/v2/clients/login',
      payload: { client_id: c.clientId, client_secret: c.secret, audience: AUDIENCE, grant_type: 'client_credentials' },
    });
    return (res.json() as { access_token: string }).access_token;
  };
  const tokenFor = async (p: Partial<Principal> & { orgId: string }): Promise<string> =>
    (
      await tokens.issueAccess({
        sub: p.sub ?? 'client_test',
        orgId: p.orgId,
        clientId: p.clientId ?? 'client_test',
        scopes: p.scopes ?? new Set(ALL_SCOPES),
        kind: p.kind ?? 'client',
        operator: p.operator ?? false,
      })
    ).token;
  const gql: Harness['gql'] = async (token, query, variables = {}) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v3/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: { query, variables },
    });
    return { status: res.statusCode, body: res.json() };
  };
  const sign = (header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string> =>
    new SignJWT(payload).setProtectedHeader({ alg: 'ES256', ...header }).sign(key.privateKey);
  return { app, a, b, tokens, clock, key, sign, tokenA: await login(a), tokenB: await login(b), tokenFor, gql };
}
