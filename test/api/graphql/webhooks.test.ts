import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../../src/api/app.js';
import { AccountService } from '../../../src/api/auth/accounts.js';
import { ALL_SCOPES } from '../../../src/api/auth/scopes.js';
import { TokenService } from '../../../src/api/auth/tokens.js';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { sqliteWebhookStore } from '../../../src/store/sqlite-async.js';
import type { AsyncWebhookStore } from '../../../src/store/webhook-port.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import type { ScenarioModel } from '../../../src/scenario/model.js';
import { AddressPolicy } from '../../../src/webhooks/address-policy.js';
import { WebhookService } from '../../../src/webhooks/service.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const FIELDS =
  'id name event_types status filters send_on_value_change endpoint_config { url http_timeout api_key { key value } basic_auth { username password } }';

function load(name: string): ScenarioModel {
  const r = loadScenarioFile(new URL(`../../../scenarios/${name}`, import.meta.url).pathname);
  if (!r.ok) throw new Error(`${name} does not load`);
  return r.model;
}

let dir: string;
let app: FastifyInstance;
let store: AsyncWebhookStore;
let tokenA: string;
let tokenB: string;
let readOnly: string;

type Gql = {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: { code?: string; path?: string } }>;
};
const gql = async (token: string, query: string, variables: Record<string, unknown> = {}): Promise<Gql> =>
  (
    await app.inject({
      method: 'POST',
      url: '/api/v3/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: { query, variables },
    })
  ).json();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'occusim-gql-hooks-'));
  const a = load('quickstart.yaml');
  const b = load('office-day.yaml');
  const clock = new VirtualClock(Date.UTC(2026, 10, 22, 12));
  const pair = await generateKeyPair('ES256', { extractable: true });
  const tokens = await TokenService.create(
    {
      issuer: 'https://auth.occusim.test/',
      audience: 'https://api.occusim.test',
      accessTtlS: 3600,
      refreshTtlS: 86_400,
      clock,
    },
    { ...pair, kid: 'k' },
  );
  const catalogue = catalogueFromScenario(a, b);
  const accounts = await AccountService.fromCatalogue(catalogue, clock, { N: 2 ** 10, r: 8, p: 1 });
  store = sqliteWebhookStore(join(dir, 'store.sqlite'));
  const webhooks = await WebhookService.open(store, new AddressPolicy(['127.0.0.1/8']), () => SECRET);
  app = await buildApi({ assets: catalogue, accounts, tokens, clock, webhooks });
  const issue = async (orgId: string, scopes: Set<string>) =>
    (
      await tokens.issueAccess({
        sub: 'client_t',
        orgId,
        clientId: 'client_t',
        scopes,
        kind: 'client',
        operator: false,
      })
    ).token;
  tokenA = await issue(a.org.id, new Set(ALL_SCOPES));
  tokenB = await issue(b.org.id, new Set(ALL_SCOPES));
  readOnly = await issue(a.org.id, new Set(['read:spaces']));
});
afterAll(async () => {
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GraphQL webhooks', () => {
  it('creates a subscription with the reference fields, returns its secret once, and lists it for its organisation only', async () => {
    const created = await gql(
      tokenA,
      `mutation { createWebhooks(input: [{ name: "rooms", eventTypes: ["ROOM_OCCUPANCY_1MIN", "FLOOR_OCCUPANCY"], endpointConfig: { url: "http://127.0.0.1:9/hook", http_timeout: 5, api_key: { key: "X-Api-Key", value: "k1" } }, filters: { room_ids: ["room_x"] } }]) { ${FIELDS} secret } }`,
    );
    expect(created.errors).toBeUndefined();
    const hook = (created.data?.createWebhooks as Array<Record<string, unknown>>)[0];
    expect(hook).toMatchObject({
      name: 'rooms',
      event_types: ['ROOM_OCCUPANCY_1M', 'FLOOR_OCCUPANCY'],
      status: 'ENABLED',
      filters: { room_ids: ['room_x'] },
      send_on_value_change: false,
      endpoint_config: {
        url: 'http://127.0.0.1:9/hook',
        http_timeout: 5,
        api_key: { key: 'X-Api-Key', value: 'k1' },
        basic_auth: null,
      },
      secret: SECRET,
    });
    expect(String(hook?.id)).toMatch(/^webhook_\d+$/);
    const listed = await gql(tokenA, `{ webhooks { ${FIELDS} secret } }`);
    expect(listed.data?.webhooks).toEqual([{ ...hook, secret: null }]);
    expect((await gql(tokenB, '{ webhooks { id } }')).data?.webhooks).toEqual([]);
  });

  it('refuses a second subscription for an event type of the organisation, and lets another organisation have it', async () => {
    const dup = await gql(
      tokenA,
      'mutation { createWebhooks(input: [{ eventTypes: ["ROOM_OCCUPANCY_1M"], endpointConfig: { url: "http://127.0.0.1:9/other" } }]) { id } }',
    );
    expect(dup.errors?.[0]).toMatchObject({
      extensions: { code: 'WEBHOOK_DUPLICATE_EVENT_TYPE' },
      message: expect.stringMatching(/^input\[0\]\.event_types: ROOM_OCCUPANCY_1M/),
    });
    const other = await gql(
      tokenB,
      'mutation { createWebhooks(input: [{ eventTypes: ["ROOM_OCCUPANCY_1M"], endpointConfig: { url: "http://127.0.0.1:9/b" } }]) { id } }',
    );
    expect(other.errors).toBeUndefined();
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'WEBHOOK_FORBIDDEN_ADDRESS'],
    ['http://[::1]/', 'WEBHOOK_FORBIDDEN_ADDRESS'],
    ['http://0x0a000001/', 'WEBHOOK_FORBIDDEN_ADDRESS'],
    ['file:///etc/passwd', 'WEBHOOK_BAD_URL'],
  ])('answers %s with a GraphQL error coded %s, never a crash', async (url, code) => {
    const res = await gql(
      tokenA,
      'mutation($u: String!) { createWebhooks(input: [{ eventTypes: ["TRAFFIC"], endpointConfig: { url: $u } }]) { id } }',
      { u: url },
    );
    // The message starts with the place in the input (the API's error mask keeps only `code` among extensions).
    expect(res.errors?.[0]).toMatchObject({
      extensions: { code },
      message: expect.stringMatching(/^input\[0\]\.endpoint_config\.url: /),
    });
    expect((await gql(tokenA, '{ webhooks { event_types } }')).data?.webhooks).not.toContainEqual({
      event_types: ['TRAFFIC'],
    });
  });

  it('updates filters, send_on_value_change and status, and another organisation cannot see or change it', async () => {
    const [hook] = (await gql(tokenA, '{ webhooks { id } }')).data?.webhooks as Array<{ id: string }>;
    const id = hook?.id as string;
    const notYours = await gql(
      tokenB,
      'mutation($id: ID!) { updateWebhooks(input: [{ id: $id, status: "DISABLED" }]) { id } }',
      { id },
    );
    expect(notYours.errors?.[0]?.extensions?.code).toBe('WEBHOOK_NOT_FOUND');
    const res = await gql(
      tokenA,
      'mutation($id: ID!) { updateWebhooks(input: [{ id: $id, filters: { floor_ids: ["space_1"] }, send_on_value_change: true, status: "DISABLED" }]) { status filters send_on_value_change } }',
      { id },
    );
    expect(res.data?.updateWebhooks).toEqual([
      { status: 'DISABLED', filters: { floor_ids: ['space_1'] }, send_on_value_change: true },
    ]);
    expect((await gql(tokenB, 'mutation($id: ID!) { deleteWebhooks(ids: [$id]) }', { id })).data?.deleteWebhooks).toBe(
      false,
    );
  });

  it('keeps subscriptions in the store across a restart', async () => {
    const again = await WebhookService.open(store, new AddressPolicy(['127.0.0.1/8']));
    expect(again.all().map((s) => s.name)).toContain('rooms');
  });

  it('needs write:spaces to change webhooks and deletes them for their organisation', async () => {
    const denied = await gql(readOnly, 'mutation { deleteWebhooks(ids: ["webhook_1"]) }');
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const ids = ((await gql(tokenA, '{ webhooks { id } }')).data?.webhooks as Array<{ id: string }>).map((w) => w.id);
    expect(
      (await gql(tokenA, 'mutation($ids: [ID!]!) { deleteWebhooks(ids: $ids) }', { ids })).data?.deleteWebhooks,
    ).toBe(true);
    expect((await gql(tokenA, '{ webhooks { id } }')).data?.webhooks).toEqual([]);
  });
});
