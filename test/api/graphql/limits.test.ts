import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

/** Resolvers never run for a refused document: the rename inside must not happen. */
async function refused(query: string): Promise<string | undefined> {
  const res = await h.gql(h.tokenA, query);
  expect(res.body.data ?? null).toBeNull();
  return res.body.errors?.[0]?.extensions?.code;
}

describe('GraphQL hardening', () => {
  it('refuses 100+ aliases before any resolver runs', async () => {
    const aliases = Array.from({ length: 120 }, (_, i) => `a${i}: sites { data { id } }`).join(' ');
    expect(await refused(`{ ${aliases} }`)).toBe('TOO_MANY_ALIASES');
  });

  it('refuses 500 duplicated fields', async () => {
    expect(await refused(`{ sites { data { ${'id '.repeat(500)} } } }`)).toBe('QUERY_TOO_COSTLY');
  });

  it('refuses deep nesting', async () => {
    let q = 'id';
    for (let i = 0; i < 8; i++) q = `buildings { site { ${q} } }`;
    expect(await refused(`{ sites { data { ${q} } } }`)).toBe('QUERY_TOO_DEEP');
  });

  it('refuses fragments that multiply into a huge query', async () => {
    const f0 = 'fragment F0 on Site { id name timezone siteNumber customID org_id }';
    const frags = [f0];
    for (let i = 1; i <= 6; i++) frags.push(`fragment F${i} on Site { ...F${i - 1} ...F${i - 1} ...F${i - 1} }`);
    expect(await refused(`{ sites { data { ...F6 } } } ${frags.join(' ')}`)).toBe('QUERY_TOO_COSTLY');
  });

  it('refuses recursive fragments', async () => {
    const res = await h.gql(h.tokenA, '{ sites { data { ...A } } } fragment A on Site { buildings { site { ...A } } }');
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors?.[0]?.message).toMatch(/cannot spread fragment|spread itself/i);
  });

  it('refuses batched operations', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v3/graphql',
      headers: { authorization: `Bearer ${h.tokenA}` },
      payload: [{ query: '{ sites { data { id } } }' }, { query: '{ buildings { data { id } } }' }] as never,
    });
    expect(res.statusCode).toBe(400);
  });

  it('masks unexpected errors and never returns stack traces', async () => {
    const res = await h.gql(h.tokenA, '{ nope }');
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/\bat \S+:\d+:\d+/);
    expect(res.body.errors?.[0]?.extensions?.code).toBeDefined();
  });
});
