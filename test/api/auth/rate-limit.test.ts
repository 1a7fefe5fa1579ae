import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

const ATTACKER = '203.0.113.9';
const OWNER = '198.51.100.7';

const login = (remoteAddress: string, username: string, password: string) =>
  h.app.inject({ method: 'POST', url: '/api/v2/login', remoteAddress, payload: { username, password } });

describe('login rate limits', () => {
  it('does not let an attacker lock the owner out: five wrong passwords from one address leave the owner’s address free', async () => {
    const { username, password } = h.a.users[0]!;
    for (let i = 0; i < 5; i++) expect((await login(ATTACKER, username, 'guess')).statusCode).toBe(400);
    expect((await login(ATTACKER, username, 'guess')).statusCode).toBe(429);
    expect((await login(OWNER, username, password)).statusCode).toBe(200);
    h.clock.advanceTo(h.clock.now() + 61_000);
  });

  it('answers 429 to an address spraying 20 user names once its budget of 10 failures is spent', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 20; i++)
      codes.push((await login('192.0.2.44', `user${i}@nowhere.test`, 'Winter2026!')).statusCode);
    expect(codes.slice(0, 10)).toEqual(Array(10).fill(400));
    expect(codes.slice(10)).toEqual(Array(10).fill(429));
    h.clock.advanceTo(h.clock.now() + 61_000);
  });

  it('refuses at once the verifications one address has beyond 4 in progress, without spending scrypt on them', async () => {
    const { username, password } = h.b.users[0]!;
    const flood = await Promise.all(
      Array.from({ length: 8 }, (_, i) => login('192.0.2.99', `bogus${i}@nowhere.test`, 'x')),
    );
    const codes = flood.map((r) => r.statusCode).sort();
    expect(codes).toEqual([400, 400, 400, 400, 429, 429, 429, 429]);
    expect((await login(OWNER, username, password)).statusCode).toBe(200);
    h.clock.advanceTo(h.clock.now() + 61_000);
  });
});
