import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { startApiServer, DEFAULT_AUDIENCE, PUBLISHED_AUDIENCE } from '../../src/api/server.js';
import { loadScenarioFile } from '../../src/scenario/load.js';

describe('API server over real HTTP', () => {
  it('logs a scenario client in and answers a GraphQL query on a real port', async () => {
    const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
    if (!r.ok) throw new Error('quickstart does not load');
    const server = await startApiServer({ catalogue: catalogueFromScenario(r.model), port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
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
      expect(login.status).toBe(200);
      const { access_token } = (await login.json()) as { access_token: string };
      const gql = await fetch(`${server.url}/api/v3/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
        body: JSON.stringify({ query: '{ sites { data { name timezone } } }' }),
      });
      expect(await gql.json()).toEqual({ data: { sites: { data: [{ name: 'HQ', timezone: 'Europe/Paris' }] } } });
    } finally {
      await server.close();
    }
  });

  it("accepts the reference platform's published audience beside its own by default, and no other", async () => {
    const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
    if (!r.ok) throw new Error('quickstart does not load');
    const c = r.model.clients[0]!;
    const login = (url: string, audience: string) =>
      fetch(`${url}/api/v2/clients/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_id: c.clientId,
          client_secret: c.secret,
          audience,
          grant_type: 'client_credentials',
        }),
      });
    const byDefault = await startApiServer({ catalogue: catalogueFromScenario(r.model), port: 0 });
    const onlyOurs = await startApiServer({
      catalogue: catalogueFromScenario(r.model),
      port: 0,
      alsoAcceptedAudiences: [],
    });
    try {
      expect((await login(byDefault.url, PUBLISHED_AUDIENCE)).status).toBe(200);
      expect((await login(byDefault.url, DEFAULT_AUDIENCE)).status).toBe(200);
      expect((await login(byDefault.url, 'https://elsewhere')).status).toBe(403);
      expect((await login(onlyOurs.url, PUBLISHED_AUDIENCE)).status).toBe(403);
    } finally {
      await Promise.all([byDefault.close(), onlyOurs.close()]);
    }
  });
});
