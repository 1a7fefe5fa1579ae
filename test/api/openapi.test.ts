import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

describe('API documentation', () => {
  it('serves an OpenAPI document naming every REST route and a browsable page', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/v1/client', '/api/v1/client/{id}', '/api/v2/clients/login', '/api/v2/login', '/api/v3/reporting', '/api/v4/reporting/stats']);
    const page = await h.app.inject({ method: 'GET', url: '/api/docs' });
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('/api/openapi.json');
  });
});
