import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { ClientCredentials, LOGIN_PATH } from '../../src/mcp/auth.js';
import { AppError } from '../../src/core/errors.js';
import type { HttpAnswer, HttpPort } from '../../src/mcp/http-port.js';
import { Platform } from '../../src/mcp/platform.js';
import { DEFAULTS, readSettings } from '../../src/mcp/settings.js';
import { connectInMemory } from './connect.js';
import { twoOrganisations } from './served.js';

/** Client-credentials login, token caching and renewal, and how failures reach the assistant. */
const settings = readSettings({ SERVICE_CLIENT_ID: 'client_a', SERVICE_CLIENT_SECRET: 's3cret' });

/** A scripted API: logins issue t1, t2, …; `graphql` answers with the status the script gives. */
function scripted(graphqlStatus: (token: string | null, n: number) => number) {
  const calls: Array<{ path: string; bearer: string | null }> = [];
  let logins = 0;
  let queries = 0;
  const port: HttpPort = {
    async post(path, _body, bearer): Promise<HttpAnswer> {
      calls.push({ path, bearer });
      if (path === LOGIN_PATH)
        return {
          status: 200,
          body: { access_token: `t${++logins}`, expires_in: 3600, token_type: 'Bearer' },
          text: '',
        };
      const status = graphqlStatus(bearer, queries++);
      return { status, body: status === 200 ? { data: { ok: true } } : { message: 'no' }, text: '' };
    },
  };
  return { port, calls, logins: () => logins };
}

describe('client credentials', () => {
  it('log in once, reuse the token, and log in again shortly before it expires', async () => {
    const clock = new VirtualClock(0);
    const api = scripted(() => 200);
    const auth = new ClientCredentials(settings, api.port, clock);
    expect(await Promise.all([auth.token(), auth.token()])).toEqual(['t1', 't1']);
    clock.advanceTo(3600_000 - 6 * 60_000);
    expect(await auth.token()).toBe('t1');
    clock.advanceTo(3600_000 - 4 * 60_000); // within 5 minutes of expiry
    expect(await auth.token()).toBe('t2');
    expect(api.logins()).toBe(2);
  });

  it('renew the token once on 401 and retry; a second refusal is AUTH_EXPIRED', async () => {
    const clock = new VirtualClock(0);
    const once = scripted((token) => (token === 't1' ? 401 : 200));
    const p = new Platform(once.port, new ClientCredentials(settings, once.port, clock));
    await expect(p.query('{ ok }')).resolves.toEqual({ ok: true });
    expect(once.calls.map((c) => `${c.path} ${c.bearer}`)).toEqual([
      `${LOGIN_PATH} null`,
      '/api/v3/graphql t1',
      `${LOGIN_PATH} null`,
      '/api/v3/graphql t2',
    ]);
    const always = scripted(() => 401);
    const q = new Platform(always.port, new ClientCredentials(settings, always.port, clock));
    await expect(q.query('{ ok }')).rejects.toMatchObject({ code: 'AUTH_EXPIRED' });
    expect(always.logins()).toBe(2);
  });

  it('map 429 to RATE_LIMITED, 400 to VALIDATION_FAILED, 500 to INTERNAL_ERROR', async () => {
    for (const [status, code] of [
      [429, 'RATE_LIMITED'],
      [400, 'VALIDATION_FAILED'],
      [500, 'INTERNAL_ERROR'],
      [404, 'NOT_FOUND'],
    ] as const) {
      const api = scripted(() => status);
      const p = new Platform(api.port, new ClientCredentials(settings, api.port, new VirtualClock(0)));
      await expect(p.report({})).rejects.toMatchObject({ code });
    }
  });
});

describe('settings', () => {
  it("default to the documented values and refuse malformed ones with the variable's name", () => {
    const s = readSettings({});
    expect(s).toMatchObject({
      clientId: null,
      baseUrl: DEFAULTS.baseUrl,
      audience: DEFAULTS.audience,
      topologyTtlMs: 600_000,
      occupancyTtlMs: 60_000,
      quietBelowPct: 30,
      busyFromPct: 70,
      debug: false,
    });
    expect(() => readSettings({ SERVICE_OCCUPANCY_CACHE_TTL_S: 'soon' })).toThrow(/SERVICE_OCCUPANCY_CACHE_TTL_S/);
    expect(() => readSettings({ SERVICE_TIMEZONE: 'Mars/Olympus' })).toThrow(AppError);
    expect(() => readSettings({ SERVICE_QUIET_BELOW_PCT: '80', SERVICE_BUSY_FROM_PCT: '70' })).toThrow(
      /SERVICE_BUSY_FROM_PCT/,
    );
    expect(readSettings({ SERVICE_BASE_URL: 'http://h:1/', SERVICE_DEBUG: 'true' })).toMatchObject({
      baseUrl: 'http://h:1',
      debug: true,
    });
  });
});

describe('a missing or wrong credential', () => {
  let platform: Awaited<ReturnType<typeof twoOrganisations>>;
  beforeAll(async () => {
    platform = await twoOrganisations();
  }, 60_000);
  afterAll(async () => platform?.close());

  it('is a tool error (VALIDATION_FAILED / AUTH_EXPIRED), and the server keeps answering', async () => {
    const missing = await connectInMemory({ SERVICE_BASE_URL: platform.api });
    const wrong = await connectInMemory({
      SERVICE_BASE_URL: platform.api,
      SERVICE_CLIENT_ID: platform.own.clients[0]?.clientId ?? '',
      SERVICE_CLIENT_SECRET: 'wrong',
    });
    const audience = await connectInMemory({
      SERVICE_BASE_URL: platform.api,
      SERVICE_CLIENT_ID: platform.own.clients[0]?.clientId ?? '',
      SERVICE_CLIENT_SECRET: platform.own.clients[0]?.secret ?? '',
      SERVICE_AUDIENCE: 'https://other',
    });
    const down = await connectInMemory({
      SERVICE_BASE_URL: 'http://127.0.0.1:9',
      SERVICE_CLIENT_ID: 'c',
      SERVICE_CLIENT_SECRET: 's',
    });
    try {
      const m = await missing.call('service_list_topology', {});
      expect(m.code).toBe('VALIDATION_FAILED');
      expect(m.text).toContain('SERVICE_CLIENT_ID');
      expect((await wrong.call('service_list_topology', {})).code).toBe('AUTH_EXPIRED');
      expect((await audience.call('service_list_topology', {})).code).toBe('AUTH_EXPIRED');
      expect((await down.call('service_list_topology', {})).code).toBe('NETWORK_ERROR');
      // Still up: listing tools and calling again both answer.
      expect((await wrong.client.listTools()).tools).toHaveLength(10);
      expect((await wrong.call('service_get_current_occupancy', { ids: ['room_1'] })).code).toBe('AUTH_EXPIRED');
    } finally {
      await Promise.all([missing.close(), wrong.close(), audience.close(), down.close()]);
    }
  });
});
