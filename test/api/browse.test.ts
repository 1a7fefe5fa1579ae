import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { startApiServer, type ApiServer } from '../../src/api/server.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';

/**
 * The browsable API in a real browser with every request off this machine refused: Swagger UI
 * at /api/docs logs in with "Try it out" and then sends the token with the next request;
 * GraphiQL at /api/graphiql logs in and runs a query; `graphiql: false` serves no IDE.
 */
const AUDIENCE = 'https://api.occusim.test';
let model: ScenarioModel;
let server: ApiServer;
let browser: Browser | null = null;
const offMachine: string[] = [];

async function context(): Promise<BrowserContext> {
  const ctx = await (browser as Browser).newContext({ viewport: { width: 1200, height: 900 } });
  ctx.setDefaultTimeout(15_000);
  await ctx.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    offMachine.push(url.href);
    return route.abort();
  });
  return ctx;
}

beforeAll(async () => {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  model = r.model;
  server = await startApiServer({ catalogue: catalogueFromScenario(model), port: 0, audience: AUDIENCE });
  if (HAVE_CHROMIUM) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server.close();
});

const client = (): ScenarioModel['clients'][number] => model.clients[0] as ScenarioModel['clients'][number];

describe('the browsable API', () => {
  it.skipIf(!HAVE_CHROMIUM)(
    'Swagger UI lists every operation, logs in with Try it out and authorises the next request',
    async () => {
      const ctx = await context();
      const page = await ctx.newPage();
      await page.goto(`${server.url}/api/docs/`);
      await page.locator('.opblock').first().waitFor();
      expect(await page.locator('.opblock').count()).toBe(6);
      const login = page.locator('.opblock', { hasText: '/api/v2/clients/login' });
      await login.locator('.opblock-summary').click();
      // tryItOutEnabled: an expanded operation is ready to send.
      const c = client();
      await login.locator('textarea.body-param__text').fill(
        JSON.stringify({
          grant_type: 'client_credentials',
          client_id: c.clientId,
          client_secret: c.secret,
          audience: AUDIENCE,
        }),
      );
      await login.getByRole('button', { name: 'Execute' }).click();
      await login.locator('.live-responses-table .response-col_status').first().waitFor();
      await expect
        .poll(() =>
          page.evaluate(() =>
            JSON.stringify(
              (
                globalThis as unknown as { occusimUi: { authSelectors: { authorized(): { toJS(): unknown } } } }
              ).occusimUi.authSelectors
                .authorized()
                .toJS(),
            ),
          ),
        )
        .toContain('bearer');
      const list = page.locator('.opblock', { hasText: 'List the organisation' });
      await list.locator('.opblock-summary').click();
      const answered = page.waitForResponse(
        (res) => res.url().endsWith('/api/v1/client') && res.request().method() === 'GET',
      );
      await list.getByRole('button', { name: 'Execute' }).click();
      const res = await answered;
      expect(res.status()).toBe(200);
      expect(await res.request().headerValue('authorization')).toMatch(/^Bearer /);
      expect(offMachine).toEqual([]);
      await ctx.close();
    },
    60_000,
  );

  it.skipIf(!HAVE_CHROMIUM)(
    'GraphiQL logs in as a client and runs a query, offline',
    async () => {
      const ctx = await context();
      const page = await ctx.newPage();
      await page.goto(`${server.url}/api/graphiql`);
      const c = client();
      await page.selectOption('#kind', 'client');
      await page.fill('#id', c.clientId);
      await page.fill('#secret', c.secret);
      await page.fill('#audience', AUDIENCE);
      await Promise.all([page.waitForEvent('load'), page.click('#login button')]);
      await page.locator('.graphiql-container').waitFor();
      const answered = page.waitForResponse(
        (res) => res.url().endsWith('/api/v3/graphql') && (res.request().postData() ?? '').includes('Floors'),
      );
      await page.locator('.graphiql-execute-button').click();
      const res = await answered;
      expect(res.status()).toBe(200);
      const body = (await res.json()) as { data: { sites: { data: Array<{ name: string }> } } };
      expect(body.data.sites.data.map((s) => s.name)).toEqual(model.sites.map((s) => s.name));
      await expect.poll(() => page.locator('.result-window').textContent()).toContain(model.sites[0]?.name ?? '');
      expect(offMachine).toEqual([]);
      await ctx.close();
    },
    60_000,
  );

  it('serves no GraphQL IDE when turned off', async () => {
    const off = await startApiServer({
      catalogue: catalogueFromScenario(model),
      port: 0,
      audience: AUDIENCE,
      graphiql: false,
    });
    try {
      expect((await fetch(`${off.url}/api/graphiql`)).status).toBe(404);
      expect((await fetch(`${server.url}/api/graphiql`)).status).toBe(200);
      expect((await fetch(`${server.url}/api/graphiql/assets/graphiql.js`)).headers.get('content-type')).toMatch(
        /javascript/,
      );
      expect((await fetch(`${server.url}/api/graphiql/assets/..%2Fpackage.json`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
