import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../../src/api/app.js';
import { AccountService } from '../../../src/api/auth/accounts.js';
import { ALL_SCOPES } from '../../../src/api/auth/scopes.js';
import { TokenService } from '../../../src/api/auth/tokens.js';
import { ANSWER_TOO_LARGE, jsonBytesUpTo } from '../../../src/api/graphql/answer-budget.js';
import { DEFAULT_LIMITS } from '../../../src/api/graphql/limits.js';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import type { FastifyInstance } from 'fastify';
import { AUDIENCE, ISSUER, TEST_COST } from '../harness.js';

const SEED = 33_007;
const BUDGET = 1_000;
let app: FastifyInstance;
let token: string;

beforeAll(async () => {
  const r = loadScenarioFile(new URL('../../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart.yaml does not load');
  const clock = new VirtualClock(Date.UTC(2026, 10, 22, 12));
  const tokens = await TokenService.create({
    issuer: ISSUER,
    audience: AUDIENCE,
    accessTtlS: 3600,
    refreshTtlS: 86_400,
    clock,
  });
  const accounts = await AccountService.fromCatalogue(catalogueFromScenario(r.model), clock, TEST_COST);
  app = await buildApi({
    assets: catalogueFromScenario(r.model),
    accounts,
    tokens,
    clock,
    limits: { ...DEFAULT_LIMITS, maxAnswerBytes: BUDGET },
  });
  token = (
    await tokens.issueAccess({
      sub: 'client_test',
      orgId: r.model.org.id,
      clientId: 'client_test',
      scopes: new Set(ALL_SCOPES),
      kind: 'client',
      operator: false,
    })
  ).token;
});
afterAll(async () => {
  await app.close();
});

async function gql(query: string): Promise<{
  status: number;
  body: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  bytes: number;
}> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v3/graphql',
    headers: { authorization: `Bearer ${token}` },
    payload: { query },
  });
  return { status: res.statusCode, body: res.json(), bytes: res.rawPayload.length };
}

/** JSON values whose strings need no escapes: their text length is what the count claims. */
const plain = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.stringMatching(/^[a-zé€ 0-9]{0,12}$/),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('GraphQL answer byte budget', () => {
  it(`counts the bytes of JSON.stringify exactly for text without escapes (seed ${SEED})`, () => {
    fc.assert(
      fc.property(plain, (v) => {
        const bytes = Buffer.byteLength(JSON.stringify(v));
        expect(jsonBytesUpTo(v, Number.MAX_SAFE_INTEGER)).toBe(bytes);
        // Stopped early, the count still says "over" without walking the rest.
        if (bytes > 10) expect(jsonBytesUpTo(v, 10)).toBeGreaterThan(10);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('refuses an answer over the budget with ANSWER_TOO_LARGE and data null, and answers one within it', async () => {
    const big = await gql(
      '{ sensors { data { id name mac_address hive_serial floor_id room_id mode model center height } } }',
    );
    expect(big.body.data).toBeNull();
    expect(big.body.errors?.map((e) => e.extensions?.code)).toEqual([ANSWER_TOO_LARGE]);
    expect(big.body.errors?.[0]?.message).toMatch(new RegExp(`budget of ${BUDGET} bytes`));
    expect(big.bytes).toBeLessThan(400);
    const small = await gql('{ sites { data { id name } } }');
    expect(small.body.errors).toBeUndefined();
    expect(small.bytes).toBeLessThan(BUDGET);
  });

  it('keeps the default estimate in line with the default byte budget (~24 bytes a value)', () => {
    expect(DEFAULT_LIMITS.maxValues * 24).toBeLessThanOrEqual(DEFAULT_LIMITS.maxAnswerBytes as number);
  });
});
