import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE, harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

const post = (url: string, payload: unknown) =>
  h.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });

describe('password login', () => {
  it('returns access, refresh and ID tokens with expires_in in seconds, never cached', async () => {
    const user = h.a.users[0]!;
    const res = await post('/api/v2/login', { username: user.username, password: user.password });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    for (const f of ['access_token', 'refresh_token', 'id_token', 'scope']) expect(typeof body[f]).toBe('string');
    expect(String(body.scope).split(' ')).toContain('read:spaces');
    const principal = await h.tokens.verifyAccess(String(body.access_token));
    expect(principal).toMatchObject({ sub: user.id, orgId: h.a.org.id, kind: 'user' });
  });

  it('refuses a wrong password as invalid_grant and missing fields as invalid_request', async () => {
    const user = h.a.users[0]!;
    const wrong = await post('/api/v2/login', { username: user.username, password: 'nope' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ error: 'invalid_grant' });
    expect(wrong.headers['cache-control']).toBe('no-store');
    const missing = await post('/api/v2/login', { username: user.username });
    expect(missing.json()).toMatchObject({ error: 'invalid_request' });
    const unknown = await post('/api/v2/login', { username: 'ghost@nowhere.test', password: 'x' });
    expect(unknown.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses an unknown grant type', async () => {
    const res = await post('/api/v2/login', { grant_type: 'implicit', username: 'a', password: 'b' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('refreshes with a single-use refresh token', async () => {
    const user = h.a.users[0]!;
    const first = (await post('/api/v2/login', { username: user.username, password: user.password })).json() as {
      refresh_token: string;
    };
    const refreshed = await post('/api/v2/login', { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json()).toHaveProperty('access_token');
    const reused = await post('/api/v2/login', { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(reused.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('rate-limits repeated failures with 429 and Retry-After', async () => {
    const username = h.b.users[1]!.username;
    for (let i = 0; i < 5; i++)
      expect((await post('/api/v2/login', { username, password: 'bad' })).statusCode).toBe(400);
    const limited = await post('/api/v2/login', { username, password: h.b.users[1]!.password });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    h.clock.advanceTo(h.clock.now() + 61_000);
    expect((await post('/api/v2/login', { username, password: h.b.users[1]!.password })).statusCode).toBe(200);
  });
});

describe('client-credentials login', () => {
  it('issues an access token without a refresh token', async () => {
    const c = h.a.clients[0]!;
    const res = await post('/api/v2/clients/login', {
      client_id: c.clientId,
      client_secret: c.secret,
      audience: AUDIENCE,
      grant_type: 'client_credentials',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(body).not.toHaveProperty('refresh_token');
    expect(await h.tokens.verifyAccess(String(body.access_token))).toMatchObject({
      clientId: c.clientId,
      orgId: h.a.org.id,
      kind: 'client',
    });
  });

  it('answers each OAuth error with its status', async () => {
    const c = h.a.clients[0]!;
    const base = {
      client_id: c.clientId,
      client_secret: c.secret,
      audience: AUDIENCE,
      grant_type: 'client_credentials',
    };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...base, client_secret: 'wrong' }, 401, 'invalid_client'],
      [{ ...base, grant_type: 'password' }, 400, 'unsupported_grant_type'],
      [{ ...base, grant_type: undefined }, 400, 'invalid_request'],
      [{ ...base, audience: 'https://elsewhere' }, 403, 'access_denied'],
    ];
    for (const [payload, status, error] of cases) {
      const res = await post('/api/v2/clients/login', payload);
      expect([res.statusCode, (res.json() as { error: string }).error]).toEqual([status, error]);
    }
  });
});
