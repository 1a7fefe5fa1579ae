import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password and client-secret hashing with scrypt at OWASP's recommended cost
 * (N = 2^17, r = 8, p = 1). Node's default scrypt `maxmem` (32 MiB) is below the 128·N·r
 * bytes this needs, so it is raised explicitly. Hashes are stored as
 * `scrypt$N$r$p$salt$hash` (base64url), so the cost can rise later without a migration.
 */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const OWASP_SCRYPT: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LEN = 32;

function derive(secret: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(secret.normalize('NFKC'), salt, KEY_LEN, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashSecret(secret: string, cost: ScryptCost = OWASP_SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(secret, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Constant-time check of `secret` against a stored hash; false for a malformed hash. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltText, keyText] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyText, 'base64url');
  const key = await derive(secret, Buffer.from(saltText, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of nothing anyone knows, verified against when the user or client does not exist,
 * so an unknown name costs the same time as a wrong password: a random salt and a random key
 * at the same cost (verifying derives the candidate's key with the salt, one full scrypt, and
 * no secret derives a random key), so it needs no scrypt of its own at start-up.
 */
export function dummyHash(cost: ScryptCost = OWASP_SCRYPT): Promise<string> {
  return Promise.resolve(
    [
      'scrypt',
      cost.N,
      cost.r,
      cost.p,
      randomBytes(16).toString('base64url'),
      randomBytes(KEY_LEN).toString('base64url'),
    ].join('$'),
  );
}
