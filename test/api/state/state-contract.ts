/** The restart contract every API state port must meet (used by the Memory and SQLite tests). */
import { generateKeyPair } from 'jose';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { expect } from 'vitest';
import { buildApi } from '../../../src/api/app.js';
import { TokenService } from '../../../src/api/auth/tokens.js';
import { apiServices } from '../../../src/api/server.js';
import type { ApiStatePort } from '../../../src/api/state/port.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import type { ScenarioModel } from '../../../src/scenario/model.js';
import { AUDIENCE, ISSUER, TEST_COST } from '../harness.js';

export const model = ((): ScenarioModel => {
  const r = loadScenarioFile(new URL('../../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
})();
const clock = new VirtualClock(Date.UTC(2026, 10, 22, 12));

/** One API process over `state`: a second call is the same API after a restart. */
export async function boot(state: ApiStatePort) {
  const { accounts, assets } = await apiServices(catalogueFromScenario(model), clock, state, TEST_COST);
  const pair = await generateKeyPair('ES256', { extractable: true });
  const tokens = await TokenService.create(
    { issuer: ISSUER, audience: AUDIENCE, accessTtlS: 3600, refreshTtlS: 86_400, clock },
    { ...pair, kid: 'k' },
  );
  const app = await buildApi({ assets, accounts, tokens, clock, state });
  const login = async (clientId: string, secret: string) =>
    app.inject({
      method: 'POST',
      url: '/api/v2/clients/login',
      payload: { client_id: clientId, client_secret: secret, audience: AUDIENCE, grant_type: 'client_credentials' },
    });
  const scenarioClient = model.clients[0]!;
  const token = ((await login(scenarioClient.clientId, scenarioClient.secret)).json() as { access_token?: string })
    .access_token;
  const gql = async (t: string, query: string) =>
    (
      await app.inject({
        method: 'POST',
        url: '/api/v3/graphql',
        headers: { authorization: `Bearer ${t}` },
        payload: { query },
      })
    ).json() as { data?: Record<string, unknown>; errors?: unknown[] };
  return { app, login, token, gql };
}

/** Everything a restart must keep, exercised against any state port. */
export async function apiStateSurvivesRestart(state: ApiStatePort): Promise<void> {
  const first = await boot(state);
  const token = first.token as string;
  const created = (
    await first.app.inject({
      method: 'POST',
      url: '/api/v1/client',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'kept' },
    })
  ).json() as { client_id: string; client_secret: string };
  const gone = (
    await first.app.inject({
      method: 'POST',
      url: '/api/v1/client',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'gone' },
    })
  ).json() as { client_id: string; client_secret: string };
  expect(
    (
      await first.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/${gone.client_id}`,
        headers: { authorization: `Bearer ${token}` },
      })
    ).statusCode,
  ).toBe(204);
  const site = model.sites[0]!;
  const room = model.rooms[0]!;
  const floor = model.floors[0]!;
  const sensor = model.sensors[0]!;
  const edits = await first.gql(
    token,
    `mutation {
    updateSiteInfo(input: { id: "${site.id}", name: "Renamed HQ", customID: "HQ-1" }) { site { id } }
    updateSensors(sensors: [{ sensor_id: "${sensor.id}", name: "Renamed sensor" }]) { id }
    createRooms(input: [{ floor_id: "${floor.id}", name: "Pop-up room", coordinates: [[0,0],[2,0],[2,2],[0,2]] }]) { id }
  }`,
  );
  expect(edits.errors).toBeUndefined();
  const tag = (await first.gql(token, 'mutation { createTag(input: { name: "quiet" }) { id } }')).data?.createTag as {
    id: string;
  };
  expect(
    (await first.gql(token, `mutation { associateTag(input: { ids: ["${room.id}"], tag_id: "${tag.id}" }) { id } }`))
      .errors,
  ).toBeUndefined();
  await first.app.close();

  const second = await boot(state);
  const t2 = second.token as string;
  expect((await second.login(created.client_id, created.client_secret)).statusCode).toBe(200);
  expect((await second.login(gone.client_id, gone.client_secret)).statusCode).toBe(401);
  const names = (
    await second.app.inject({ method: 'GET', url: '/api/v1/client', headers: { authorization: `Bearer ${t2}` } })
  ).json() as Array<{ name: string }>;
  expect(names.map((c) => c.name)).toContain('kept');
  expect(names.map((c) => c.name)).not.toContain('gone');
  const seen = await second.gql(
    t2,
    `{
    site(id: "${site.id}") { name customID }
    sensors(ids: ["${sensor.id}"]) { data { name } }
    floor(id: "${floor.id}") { rooms { name tags { name } } }
  }`,
  );
  expect(seen.errors).toBeUndefined();
  const data = seen.data as {
    site: { name: string; customID: string };
    sensors: { data: Array<{ name: string }> };
    floor: { rooms: Array<{ name: string; tags: Array<{ name: string }> }> };
  };
  expect(data.site).toEqual({ name: 'Renamed HQ', customID: 'HQ-1' });
  expect(data.sensors.data.map((x) => x.name)).toEqual(['Renamed sensor']);
  expect(data.floor.rooms.map((r) => r.name)).toContain('Pop-up room');
  expect(data.floor.rooms.find((r) => r.name === room.name)?.tags).toEqual([{ name: 'quiet' }]);
  await second.app.close();

  // A scenario client deleted through the API stays deleted after a restart.
  const scenarioClient = model.clients[0]!;
  const third = await boot(state);
  expect(
    (
      await third.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/${scenarioClient.clientId}`,
        headers: { authorization: `Bearer ${third.token as string}` },
      })
    ).statusCode,
  ).toBe(204);
  await third.app.close();
  const fourth = await boot(state);
  expect(fourth.token).toBeUndefined();
  expect((await fourth.login(scenarioClient.clientId, scenarioClient.secret)).statusCode).toBe(401);
  await fourth.app.close();
}
