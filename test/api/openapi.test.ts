import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_DOCS } from '../../src/api/route-schemas.js';
import { harness, type Harness } from './harness.js';
import { MemorySeries } from './reporting/fixture-series.js';

/**
 * The OpenAPI document is generated from the routes' own schemas (@fastify/swagger): it lists
 * the routes the app serves, with the body schemas that validate their requests; Swagger UI
 * is served from the package at /api/docs.
 */
let h: Harness;
let bare: Harness;
beforeAll(async () => {
  h = await harness(new MemorySeries());
  bare = await harness();
});
afterAll(async () => {
  await h.app.close();
  await bare.app.close();
});

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: { 'application/json': { schema: unknown } } };
        responses: Record<string, unknown>;
        security?: unknown;
      }
    >
  >;
};

describe('API documentation', () => {
  it('serves an OpenAPI 3.1 document naming every REST route the app serves', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/client',
      '/api/v1/client/{id}',
      '/api/v2/clients/login',
      '/api/v2/login',
      '/api/v3/reporting',
      '/api/v4/reporting/stats',
    ]);
    // Without a series (no store behind the API) the reporting routes are not served, nor documented.
    const bareDoc = (await bare.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    expect(Object.keys(bareDoc.paths).sort()).toEqual([
      '/api/v1/client',
      '/api/v1/client/{id}',
      '/api/v2/clients/login',
      '/api/v2/login',
    ]);
  });

  it('documents each route with the schema it validates with, and its responses', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    for (const [key, route] of Object.entries(ROUTE_DOCS)) {
      const [method, url] = key.split(' ') as [string, string];
      const op = doc.paths[url.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
      expect(op, key).toBeDefined();
      const body = (route.schema as { body?: unknown }).body;
      if (body) expect(op?.requestBody?.content['application/json'].schema, key).toMatchObject(body as object);
      expect(Object.keys(op?.responses ?? {}).sort(), key).toEqual(Object.keys(route.responses).sort());
      if ((route.schema as { security?: unknown }).security) expect(op?.security, key).toEqual([{ bearer: [] }]);
    }
  });

  it('refuses with its schema what the document says is invalid, after authentication', async () => {
    const anonymous = await h.app.inject({ method: 'POST', url: '/api/v1/client', payload: { name: 5 } });
    expect(anonymous.statusCode).toBe(401);
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/client',
      headers: { authorization: `Bearer ${h.tokenA}` },
      payload: { name: 5 },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 'INVALID_REQUEST', message: 'name must be a string' });
    const login = await h.app.inject({
      method: 'POST',
      url: '/api/v2/login',
      payload: { username: ['x'], password: 'p' },
    });
    expect(login.statusCode).toBe(400);
    expect(login.json()).toEqual({ error: 'invalid_request', error_description: 'username must be a string' });
  });

  it('serves Swagger UI at /api/docs from the package (no CDN), with the login helper', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).not.toMatch(/https?:\/\//);
    for (const m of page.body.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const url = new URL(m[1] as string, 'http://x/api/docs/').pathname;
      expect((await h.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
    expect(page.body).toContain('occusim-login.js');
    expect((await h.app.inject({ method: 'GET', url: '/api/docs/json' })).json()).toMatchObject({ openapi: '3.1.0' });
  });
});
