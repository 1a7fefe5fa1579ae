import { describe, expect, it } from 'vitest';
import { AccountService } from '../../../src/api/auth/accounts.js';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import { OWASP_SCRYPT } from '../../../src/api/auth/passwords.js';

/**
 * Seeded secrets are hashed at first login, not at start (issue 33 item 8): building the
 * accounts of 2,000 organisations costs no scrypt at all, and a seeded account's logins
 * succeed with its secret and fail with anything else, before and after its first login.
 */
const TEST_COST = { N: 2 ** 10, r: 8, p: 1 };

function twoTenants() {
  const r = loadScenarioFile(new URL('../../../scenarios/two-tenants.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('two-tenants.yaml does not load');
  return r.model;
}

describe('accounts', () => {
  it('builds the accounts of many organisations without hashing any seeded secret (OWASP cost: ~1 s a hash)', async () => {
    const model = twoTenants();
    const base = model.clients[0] as (typeof model.clients)[number];
    const clients = Array.from({ length: 2_000 }, (_, i) => ({
      ...base,
      clientId: `client_many${i}`,
      name: `c${i}`,
      secret: `secret-${i}`,
    }));
    const t0 = performance.now();
    const { organisations: _several, ...one } = model;
    const svc = await AccountService.fromCatalogue(
      catalogueFromScenario({ ...one, clients }),
      new VirtualClock(0),
      OWASP_SCRYPT,
    );
    const ms = performance.now() - t0;
    expect(ms).toBeLessThan(2_000);
    expect(svc.getClient(model.org.id, 'client_many1999')?.name).toBe('c1999');
  });

  it('accepts a seeded secret at its first login and after, and refuses a wrong one either side', async () => {
    const model = twoTenants();
    const svc = await AccountService.fromCatalogue(catalogueFromScenario(model), new VirtualClock(0), TEST_COST);
    const c = model.clients[0] as (typeof model.clients)[number];
    const u = model.users[0] as (typeof model.users)[number];
    expect(await svc.authenticateClient(c.clientId, 'wrong')).toBeNull();
    expect((await svc.authenticateClient(c.clientId, c.secret))?.clientId).toBe(c.clientId);
    expect((await svc.authenticateClient(c.clientId, c.secret))?.clientId).toBe(c.clientId);
    expect(await svc.authenticateClient(c.clientId, `${c.secret}x`)).toBeNull();
    expect(await svc.authenticateUser(u.username, 'wrong')).toBeNull();
    const [a, b] = await Promise.all([
      svc.authenticateUser(u.username.toUpperCase(), u.password),
      svc.authenticateUser(u.username, u.password),
    ]);
    expect([a?.username, b?.username]).toEqual([u.username, u.username]);
    expect(await svc.authenticateUser(u.username, '')).toBeNull();
    expect(await svc.authenticateUser('nobody@nowhere.test', u.password)).toBeNull();
  });
});
