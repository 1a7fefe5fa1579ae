import {
  EmptyResultSchema,
  LoggingMessageNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE } from '../../src/api/server.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { connectInMemory, type Session } from './connect.js';
import { twoOrganisations } from './served.js';

/**
 * `logging/setLevel` and `notifications/message` (issue 28, item 4): the server's own events
 * (login, platform calls, failures) reach the client at or above the level it chose, `info`
 * until it chooses, against a real API over loopback.
 */
let platform: Awaited<ReturnType<typeof twoOrganisations>>;

const env = (m: ScenarioModel, api: string): Record<string, string> => ({
  SERVICE_CLIENT_ID: m.clients[0]?.clientId ?? '',
  SERVICE_CLIENT_SECRET: m.clients[0]?.secret ?? '',
  SERVICE_BASE_URL: api,
  SERVICE_AUDIENCE: DEFAULT_AUDIENCE,
});

/** A session whose log messages are collected. */
async function listening(
  e: Record<string, string>,
): Promise<{ session: Session; got: LoggingMessageNotification['params'][] }> {
  const session = await connectInMemory(e);
  const got: LoggingMessageNotification['params'][] = [];
  session.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void got.push(n.params));
  return { session, got };
}

/** Lets notifications already sent arrive (the in-memory transport delivers on later ticks). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

beforeAll(async () => {
  platform = await twoOrganisations();
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

describe('log messages', () => {
  it('are info and above until the client sets a level: the login, not each call', async () => {
    const { session, got } = await listening(env(platform.own, platform.api));
    try {
      expect((await session.call('service_list_topology', { depth: 1 })).isError).toBe(false);
      await settle();
      expect(got.map((m) => [m.level, m.logger])).toEqual([['info', 'auth']]);
      expect(String(got[0]?.data)).toMatch(/^logged in as client_/);
    } finally {
      await session.close();
    }
  });

  it('follow logging/setLevel: debug brings each platform call, error silences them', async () => {
    const { session, got } = await listening(env(platform.own, platform.api));
    try {
      expect(await session.client.setLoggingLevel('debug')).toEqual({});
      await session.call('service_list_topology', { depth: 1 });
      await settle();
      const calls = got.filter((m) => m.logger === 'platform');
      expect(calls.length).toBeGreaterThan(0);
      for (const m of calls)
        expect([m.level, String(m.data)]).toEqual([
          'debug',
          expect.stringMatching(/^\/api\/v3\/graphql → 200 in [\d.]+ ms$/),
        ]);
      got.length = 0;
      await session.client.setLoggingLevel('error');
      await session.call('service_search_assets', { query: 'office' });
      await session.call('service_get_current_occupancy', { ids: [platform.own.rooms[0]?.id as string] });
      await settle();
      expect(got).toEqual([]);
    } finally {
      await session.close();
    }
  });

  it('report a platform that does not answer as an error, at the error level', async () => {
    const { session, got } = await listening({
      ...env(platform.own, platform.api),
      SERVICE_BASE_URL: 'http://127.0.0.1:9',
    });
    try {
      await session.client.setLoggingLevel('error');
      expect((await session.call('service_list_topology', {})).code).toBe('NETWORK_ERROR');
      await settle();
      expect(got.map((m) => [m.level, m.logger])).toEqual([['error', 'auth']]);
      expect(String(got[0]?.data)).toContain('did not answer');
    } finally {
      await session.close();
    }
  });

  it('refuse a level outside the eight of the spec with invalid params (-32602)', async () => {
    const { session } = await listening(env(platform.own, platform.api));
    try {
      await expect(
        session.client.request({ method: 'logging/setLevel', params: { level: 'verbose' } }, EmptyResultSchema),
      ).rejects.toMatchObject({ code: -32602 });
    } finally {
      await session.close();
    }
  });
});
