import { mkdtempSync } from 'node:fs';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE, startApiServer, type ApiServer } from '../../src/api/server.js';
import type { Store } from '../../src/store/port.js';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { loadScenarioFile } from '../../src/scenario/load.js';

/**
 * Client mistakes against the API as `occusim run --serve` wires it: over real HTTP, with
 * the cloud store as the device-status source (the harness builds the API without one,
 * which is how GraphQL's 401 hid behind a 500 on every served run).
 */
let server: ApiServer;
let store: Store;
let token = '';

beforeAll(async () => {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'occusim-http-')), 'store.sqlite'));
  server = await startApiServer({ catalogue: catalogueFromScenario(r.model), port: 0, status: store });
  const c = r.model.clients[0]!;
  const login = await fetch(`${server.url}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: c.clientId,
      client_secret: c.secret,
      audience: DEFAULT_AUDIENCE,
      grant_type: 'client_credentials',
    }),
  });
  token = ((await login.json()) as { access_token: string }).access_token;
});

afterAll(async () => {
  await server.close();
  await store.close();
});

/** Status and error code of a GraphQL request (code from `{ code }` or the first GraphQL error). */
async function gql(init: {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  search?: string;
  auth?: string | null;
}): Promise<{ status: number; code: unknown }> {
  const auth = init.auth === null ? {} : { authorization: `Bearer ${init.auth ?? token}` };
  const res = await fetch(`${server.url}/api/v3/graphql${init.search ?? ''}`, {
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...auth, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const body = (await res.json()) as { code?: string; errors?: Array<{ extensions?: { code?: string } }> };
  return { status: res.status, code: body.code ?? body.errors?.[0]?.extensions?.code };
}

const QUERY = JSON.stringify({ query: '{ sites { data { id } } }' });

describe('API errors for client mistakes on a served run', () => {
  it('answers GraphQL without a token or with an invalid one 401, not 500', async () => {
    expect(await gql({ body: QUERY, auth: null })).toEqual({ status: 401, code: undefined });
    expect(await gql({ body: QUERY, auth: 'not.a.jwt' })).toEqual({ status: 401, code: undefined });
    expect((await gql({ body: QUERY })).status).toBe(200);
  });

  it('answers a body over 1 MB 413 and a form-encoded or text/plain POST 4xx, each INVALID_REQUEST', async () => {
    expect(
      await gql({ body: JSON.stringify({ query: `{ sites { data { id } } } #${'x'.repeat(1_100_000)}` }) }),
    ).toEqual({ status: 413, code: 'INVALID_REQUEST' });
    expect(
      await gql({
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'query=%7B%20sites%20%7B%20data%20%7B%20id%20%7D%20%7D%20%7D',
      }),
    ).toEqual({ status: 415, code: 'INVALID_REQUEST' });
    expect(await gql({ headers: { 'content-type': 'text/plain' }, body: '{ sites { data { id } } }' })).toEqual({
      status: 400,
      code: 'INVALID_REQUEST',
    });
  });

  it('answers a batch, a 100,000-deep JSON body, a JSON query and a mutation over GET 4xx with INVALID_REQUEST', async () => {
    expect(
      await gql({
        body: JSON.stringify([{ query: '{ sites { data { id } } }' }, { query: '{ buildings { data { id } } }' }]),
      }),
    ).toEqual({ status: 400, code: 'INVALID_REQUEST' });
    expect(await gql({ body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` })).toEqual({
      status: 400,
      code: 'INVALID_REQUEST',
    });
    expect(await gql({ body: JSON.stringify({ query: '5' }) })).toEqual({ status: 400, code: 'INVALID_REQUEST' });
    const mutation = encodeURIComponent('mutation { createTag(input: { name: "x" }) { id } }');
    expect(await gql({ method: 'GET', search: `?query=${mutation}`, headers: {} })).toEqual({
      status: 405,
      code: 'INVALID_REQUEST',
    });
  });
});
