import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteApiState } from '../../../src/store/sqlite-api-state.js';
import { SqliteStore } from '../../../src/store/sqlite-store.js';
import { AUDIENCE, harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string | null, payload?: unknown) =>
  h.app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

describe('client management', () => {
  it('creates a client (201) whose secret is shown once, lists and gets it without the secret, and deletes it (204)', async () => {
    const created = await call('POST', '/api/v1/client', h.tokenA, { name: 'ci runner', description: 'nightly' });
    expect(created.statusCode).toBe(201);
    const body = created.json() as { client_id: string; client_secret: string; name: string; description: string };
    expect(body).toMatchObject({ name: 'ci runner', description: 'nightly' });
    expect(body.client_id).toMatch(/^client_[0-9A-Za-z]{27}$/);
    expect(body.client_secret.length).toBeGreaterThan(30);

    const list = (await call('GET', '/api/v1/client', h.tokenA)).json() as Array<Record<string, string>>;
    const listed = list.find((c) => c.client_id === body.client_id);
    expect(listed).toEqual({
      id: body.client_id,
      name: 'ci runner',
      description: 'nightly',
      client_id: body.client_id,
    });
    expect(JSON.stringify(list)).not.toContain(body.client_secret);

    const got = await call('GET', `/api/v1/client/${body.client_id}`, h.tokenA);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(listed);

    // The new client logs in, with every scope of spec §4.5 rule 2.
    const login = await h.app.inject({
      method: 'POST',
      url: '/api/v2/clients/login',
      payload: {
        client_id: body.client_id,
        client_secret: body.client_secret,
        audience: AUDIENCE,
        grant_type: 'client_credentials',
      },
    });
    expect(login.statusCode).toBe(200);
    const scopes = String((login.json() as { scope: string }).scope).split(' ');
    for (const s of ['read:spaces', 'write:rooms', 'delete:sensors', 'read:hives']) expect(scopes).toContain(s);

    const del = await call('DELETE', `/api/v1/client/${body.client_id}`, h.tokenA);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    const again = await h.app.inject({
      method: 'POST',
      url: '/api/v2/clients/login',
      payload: {
        client_id: body.client_id,
        client_secret: body.client_secret,
        audience: AUDIENCE,
        grant_type: 'client_credentials',
      },
    });
    expect(again.statusCode).toBe(401);
    // Its unexpired access token stops working too.
    const stale = await call('GET', '/api/v1/client', (login.json() as { access_token: string }).access_token);
    expect(stale.statusCode).toBe(401);
  });

  it('answers missing name with 400 INVALID_REQUEST and unknown ids with 404 CLIENT_NOT_FOUND', async () => {
    const bad = await call('POST', '/api/v1/client', h.tokenA, { description: 'no name' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'INVALID_REQUEST' });
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await call(method, '/api/v1/client/client_doesnotexist', h.tokenA);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'CLIENT_NOT_FOUND' });
    }
  });

  it('answers 401 with a message only when the token is missing or malformed', async () => {
    for (const token of [null, 'not-a-jwt']) {
      const res = await call('GET', '/api/v1/client', token);
      expect(res.statusCode).toBe(401);
      const body = res.json() as Record<string, unknown>;
      expect(typeof body.message).toBe('string');
      expect(body).not.toHaveProperty('code');
    }
  });

  it("hides another organisation's clients exactly like clients that do not exist", async () => {
    const theirs = h.b.clients[0]!.clientId;
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await call(method, `/api/v1/client/${theirs}`, h.tokenA);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'CLIENT_NOT_FOUND' });
    }
    const list = (await call('GET', '/api/v1/client', h.tokenA)).json() as Array<{ client_id: string }>;
    expect(list.map((c) => c.client_id)).not.toContain(theirs);
  });
});

describe('client input bounds (issue 16, finding 10)', () => {
  const created = (res: { statusCode: number }) => res.statusCode === 201;

  it.each([
    ['a NUL', 'evil\u0000name', /control characters \(U\+0000 at position 4\)/],
    ['an escape sequence', 'x\u001b[31m', /control characters \(U\+001B/],
    ['a newline', 'two\nlines', /control characters \(U\+000A/],
    [
      'a right-to-left override',
      'invoice\u202Efdp.exe',
      /bidirectional formatting characters \(U\+202E at position 7\)/,
    ],
    ['a first-strong isolate', 'a\u2068b', /bidirectional formatting characters \(U\+2068/],
    ['an unpaired surrogate', 'bad\uD800', /unpaired surrogates/],
  ])('refuses a name with %s: 400 INVALID_REQUEST naming the character and place', async (_what, name, message) => {
    const res = await call('POST', '/api/v1/client', h.tokenA, { name });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((res.json() as { message: string }).message).toMatch(message);
  });

  it('bounds descriptions at 1000 characters and refuses control characters other than line breaks and tabs', async () => {
    const long = await call('POST', '/api/v1/client', h.tokenA, { name: 'long', description: 'x'.repeat(900_000) });
    expect(long.statusCode).toBe(400);
    expect((long.json() as { message: string }).message).toMatch(
      /description must be at most 1000 characters \(got 900000\)/,
    );
    const rlo = await call('POST', '/api/v1/client', h.tokenA, { name: 'rlo', description: 'abc\u202Edef' });
    expect(rlo.statusCode).toBe(400);
    const lines = await call('POST', '/api/v1/client', h.tokenA, {
      name: 'multi-line',
      description: 'first line\n\tsecond line',
    });
    expect(lines.statusCode).toBe(201);
    const ok = await call('POST', '/api/v1/client', h.tokenA, { name: 'Zürich 東京 ✓', description: 'x'.repeat(1000) });
    expect(ok.statusCode).toBe(201);
    for (const res of [lines, ok])
      expect(
        (await call('DELETE', `/api/v1/client/${(res.json() as { client_id: string }).client_id}`, h.tokenA))
          .statusCode,
      ).toBe(204);
  });

  it('caps an organisation at 50 clients, also under a concurrent burst: 400 CLIENT_CREATE_FAILED, and deleting one frees a place', async () => {
    const held = ((await call('GET', '/api/v1/client', h.tokenA)).json() as unknown[]).length;
    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) => call('POST', '/api/v1/client', h.tokenA, { name: `burst-${i}` })),
    );
    expect(burst.filter(created)).toHaveLength(50 - held);
    const refused = burst.filter((r) => !created(r));
    expect(refused.every((r) => r.statusCode === 400)).toBe(true);
    expect(refused[0]!.json()).toMatchObject({
      code: 'CLIENT_CREATE_FAILED',
      message: expect.stringMatching(/already has 50 clients/) as unknown,
    });
    expect(((await call('GET', '/api/v1/client', h.tokenA)).json() as unknown[]).length).toBe(50);
    // Organisation B is not affected by A's quota.
    const theirs = await call('POST', '/api/v1/client', h.tokenB, { name: 'b-still-can' });
    expect(theirs.statusCode).toBe(201);
    const one = (burst.find(created)!.json() as { client_id: string }).client_id;
    expect((await call('DELETE', `/api/v1/client/${one}`, h.tokenA)).statusCode).toBe(204);
    expect((await call('POST', '/api/v1/client', h.tokenA, { name: 'after-delete' })).statusCode).toBe(201);
    // Leave A as it was for the other tests.
    const list = (await call('GET', '/api/v1/client', h.tokenA)).json() as Array<{ client_id: string; name: string }>;
    for (const c of list.filter((c) => c.name.startsWith('burst-') || c.name === 'after-delete'))
      await call('DELETE', `/api/v1/client/${c.client_id}`, h.tokenA);
  });
});

/**
 * Failures of the store behind client management, made by the store itself: a SQLite trigger
 * (added through a second connection to the real file) aborts the write of one step for one
 * client name, as a full disk or a lost database would abort it.
 */
describe('client management when the store refuses a write (spec §7 codes, never a bare 500)', () => {
  let s: Harness;
  let db: Database.Database;
  beforeAll(async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'occusim-clients-')), 'store.sqlite');
    new SqliteStore(path).close(); // creates the file and runs the migrations
    s = await harness(undefined, new SqliteApiState(path));
    db = new Database(path);
    // Step 1 (the record, no scopes yet), step 2 (its grant), step 3 (its association with the caller).
    db.exec(`
      CREATE TRIGGER fail_create BEFORE INSERT ON api_clients WHEN NEW.name = 'fail-create' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
      CREATE TRIGGER fail_grant BEFORE INSERT ON api_clients WHEN NEW.name = 'fail-grant' AND NEW.scopes <> '[]' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
      CREATE TRIGGER fail_update BEFORE INSERT ON api_clients WHEN NEW.name = 'fail-update' AND NEW.created_by IS NOT NULL BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
      CREATE TABLE doomed (client_id TEXT PRIMARY KEY);
      CREATE TRIGGER fail_delete BEFORE INSERT ON api_clients WHEN NEW.deleted = 1 AND NEW.client_id IN (SELECT client_id FROM doomed) BEGIN SELECT RAISE(ABORT, 'database is locked'); END;
    `);
  });
  afterAll(async () => {
    db.close();
    await s.app.close();
  });
  const on = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    s.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${s.tokenA}` },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const names = async (): Promise<string[]> =>
    ((await on('GET', '/api/v1/client')).json() as Array<{ name: string }>).map((c) => c.name);

  it.each([
    ['fail-create', 'CLIENT_CREATE_FAILED', /^creating the client failed: database or disk is full$/],
    [
      'fail-grant',
      'CLIENT_GRANT_CREATE_FAILED',
      /^authorizing the client for API access failed: database or disk is full$/,
    ],
    [
      'fail-update',
      'CLIENT_UPDATE_FAILED',
      /^associating the client with the calling client failed: database or disk is full$/,
    ],
  ])('a create whose %s step fails answers 500 %s, and leaves no client behind', async (name, code, message) => {
    const res = await on('POST', '/api/v1/client', { name });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ code, message: expect.stringMatching(message) as unknown });
    expect(await names()).not.toContain(name);
    // What the steps before the failed one stored is undone: the store holds no live row of it.
    expect(db.prepare('SELECT count(*) AS n FROM api_clients WHERE name = ? AND deleted = 0').get(name)).toEqual({
      n: 0,
    });
  });

  it('a delete the store refuses answers 500 CLIENT_DELETE_FAILED and keeps the client whole; the retry succeeds', async () => {
    const made = await on('POST', '/api/v1/client', { name: 'kept', description: 'd' });
    expect(made.statusCode).toBe(201);
    const { client_id: id, client_secret: secret } = made.json() as { client_id: string; client_secret: string };
    db.prepare('INSERT INTO doomed VALUES (?)').run(id);
    const refused = await on('DELETE', `/api/v1/client/${id}`);
    expect(refused.statusCode).toBe(500);
    expect(refused.json()).toEqual({
      code: 'CLIENT_DELETE_FAILED',
      message: 'deleting the client failed: database is locked',
    });
    expect((await on('GET', `/api/v1/client/${id}`)).statusCode).toBe(200);
    const login = await s.app.inject({
      method: 'POST',
      url: '/api/v2/clients/login',
      payload: { client_id: id, client_secret: secret, audience: AUDIENCE, grant_type: 'client_credentials' },
    });
    expect(login.statusCode).toBe(200);
    db.prepare('DELETE FROM doomed').run();
    expect((await on('DELETE', `/api/v1/client/${id}`)).statusCode).toBe(204);
    expect((await on('GET', `/api/v1/client/${id}`)).json()).toMatchObject({ code: 'CLIENT_NOT_FOUND' });
  });
});
