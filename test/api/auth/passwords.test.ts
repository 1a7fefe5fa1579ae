import { describe, expect, it } from 'vitest';
import { dummyHash, hashSecret, OWASP_SCRYPT, verifySecret } from '../../../src/api/auth/passwords.js';

describe('secret hashing', () => {
  it('uses scrypt at the OWASP cost and verifies only the right secret', async () => {
    const stored = await hashSecret('correct horse battery staple');
    expect(stored.startsWith(`scrypt$${OWASP_SCRYPT.N}$8$1$`)).toBe(true);
    expect(await verifySecret('correct horse battery staple', stored)).toBe(true);
    expect(await verifySecret('Correct horse battery staple', stored)).toBe(false);
  });

  it('salts every hash and refuses malformed stored values', async () => {
    const cheap = { N: 2 ** 10, r: 8, p: 1 };
    expect(await hashSecret('x', cheap)).not.toBe(await hashSecret('x', cheap));
    expect(await verifySecret('x', 'bcrypt$whatever')).toBe(false);
    expect(await verifySecret('x', await dummyHash(cheap))).toBe(false);
  });
});
