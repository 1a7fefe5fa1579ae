import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventId } from '../../src/cloud/events.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { systemClock } from '../../src/core/clock.js';
import { startPlatform, type Platform } from '../../src/platform/platform.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { verify } from '../../src/webhooks/signing.js';
import { startTestReceiver, type TestReceiver } from './receiver-fixture.js';

/**
 * A served platform (wall clock, `occusim serve`): a subscription created through GraphQL on
 * its HTTP API is delivered by the platform's own ticker, signed with the secret createWebhooks
 * returned once.
 */
const AUDIENCE = 'https://api.occusim.test';
let dir: string;
let platform: Platform;
let receiver: TestReceiver;
let model: ScenarioModel;
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'occusim-served-hooks-'));
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  model = r.model;
  receiver = await startTestReceiver();
  platform = await startPlatform(
    platformConfig({
      organisations: organisationsFromScenario(model),
      tickMs: model.tickMs,
      store: { kind: 'sqlite', path: join(dir, 'store.sqlite') },
      api: { port: 0, audience: AUDIENCE },
      advanceEveryMs: 50,
      webhooks: { seed: 1, allow: ['127.0.0.1/8'] },
    }),
    { clock: systemClock },
  );
  const client = model.clients[0] as ScenarioModel['clients'][number];
  const login = await fetch(`${platform.apiUrl}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.secret,
      audience: AUDIENCE,
    }),
  });
  token = ((await login.json()) as { access_token: string }).access_token;
});
afterAll(async () => {
  await platform.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('webhooks on a served platform', () => {
  it('delivers on its own clock to a subscription created through GraphQL, signed with the secret returned once', async () => {
    const res = await fetch(`${platform.apiUrl}/api/v3/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query:
          'mutation($u: String!) { createWebhooks(input: [{ name: "live", eventTypes: ["ROOM_OCCUPANCY"], endpointConfig: { url: $u } }]) { id secret } }',
        variables: { u: receiver.url },
      }),
    });
    const body = (await res.json()) as { data: { createWebhooks: Array<{ id: string; secret: string }> } };
    const secret = body.data.createWebhooks[0]?.secret as string;
    expect(secret).toMatch(/^whsec_/);
    // An occupancy event in the outbox, as the recompute writes it (through its own connection).
    const store = new SqliteStore(platform.dbPath);
    const room = model.rooms[0]?.id as string;
    const t = systemClock.now();
    store.writeEvents([
      {
        eventId: eventId('ROOM_OCCUPANCY', room, t, 0),
        type: 'ROOM_OCCUPANCY',
        spaceId: room,
        minuteMs: t,
        value: 3,
        revision: 0,
        emittedAtMs: t,
      },
    ]);
    store.close();
    const deadline = systemClock.now() + 5000;
    while (receiver.received.length === 0 && systemClock.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0] as TestReceiver['received'][number];
    expect(JSON.parse(got.body)).toMatchObject({ type: 'ROOM_OCCUPANCY', data: 3, metadata: { room_id: room } });
    expect(
      verify([secret], got.headers as Record<string, string>, got.body, Math.floor(systemClock.now() / 1000)),
    ).toEqual({ ok: true });
  });
});
