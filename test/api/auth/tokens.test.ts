import { createHmac } from 'node:crypto';
import { base64url, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE, harness, ISSUER, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

const part = (x: unknown): string => base64url.encode(JSON.stringify(x));
const HEADER = { typ: 'at+jwt', kid: 'test-key' };
const nowS = (): number => Math.floor(h.clock.now() / 1000);
const good = (): Record<string, unknown> => ({
  iss: ISSUER,
  aud: AUDIENCE,
  sub: 'client_x',
  client_id: 'client_x',
  org_id: h.a.org.id,
  scope: 'read:spaces',
  jti: 'jti-1',
  iat: nowS(),
  exp: nowS() + 600,
});
const status = async (token: string): Promise<number> => (await h.gql(token, '{ sites { data { id } } }')).status;

describe('access-token verification', () => {
  it('accepts a well-formed token signed with the API key (control)', async () => {
    expect(await status(await h.sign(HEADER, good()))).toBe(200);
  });

  it('rejects the whole negative corpus with 401', async () => {
    const without = (k: string): Record<string, unknown> => {
      const p = good();
      delete p[k];
      return p;
    };
    const genuine = await h.sign(HEADER, good());
    const [hdr, , sig] = genuine.split('.') as [string, string, string];
    const publicPem = await exportSPKI(h.key.publicKey);
    const hsHead = part({ alg: 'HS256', ...HEADER });
    const hsBody = part(good());
    const foreign = await generateKeyPair('ES256');
    const corpus: Record<string, string> = {
      'alg none': `${part({ alg: 'none', ...HEADER })}.${part(good())}.`,
      'HS256 signed with the public key': `${hsHead}.${hsBody}.${createHmac('sha256', publicPem).update(`${hsHead}.${hsBody}`).digest('base64url')}`,
      'wrong typ': await h.sign({ ...HEADER, typ: 'JWT' }, good()),
      'wrong aud': await h.sign(HEADER, { ...good(), aud: 'https://elsewhere' }),
      'wrong iss': await h.sign(HEADER, { ...good(), iss: 'https://evil.test/' }),
      expired: await h.sign(HEADER, { ...good(), iat: nowS() - 7200, exp: nowS() - 3600 }),
      'not yet valid': await h.sign(HEADER, { ...good(), nbf: nowS() + 3600 }),
      'missing client_id': await h.sign(HEADER, without('client_id')),
      'unknown kid': await h.sign({ ...HEADER, kid: 'other-key' }, good()),
      'foreign key with our kid': await new SignJWT(good())
        .setProtectedHeader({ alg: 'ES256', ...HEADER })
        .sign(foreign.privateKey),
      'tampered payload': `${hdr}.${part({ ...good(), org_id: h.b.org.id })}.${sig}`,
      garbage: 'a.b.c',
    };
    const results = Object.fromEntries(
      await Promise.all(Object.entries(corpus).map(async ([name, t]) => [name, await status(t)] as const)),
    );
    expect(results).toEqual(Object.fromEntries(Object.keys(corpus).map((k) => [k, 401])));
  });
});
