import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema, getIntrospectionQuery, parse, validate } from 'graphql';
import { DEFAULT_LIMITS, queryLimitsRule } from '../../../src/api/graphql/limits.js';
import { typeDefs } from '../../../src/api/graphql/schema.js';
import { harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

/** 23 scalar fields of Sensor, as in the amplification finding. */
const SENSOR_FIELDS =
  'id sensor_id client_id name mac_address mode model floor_id room_id hive_id hive_serial height center orientation field_of_view effective_field_of_view sensitivity door_line in_direction is_entrance is_online is_streaming power_type';

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

  it('accepts the standard introspection query, whose depth is beyond the operation limit', async () => {
    const res = await h.gql(h.tokenA, getIntrospectionQuery());
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data).toHaveProperty('__schema.queryType.name', 'Query');
  });

  it('still refuses an introspection tower deeper than the introspection limit', async () => {
    let q = 'name';
    for (let i = 0; i < 11; i++) q = `fields { type { ${q} } }`;
    expect(await refused(`{ __type(name: "Site") { ${q} } }`)).toBe('QUERY_TOO_DEEP');
  });

  it('refuses fragments that multiply into a huge query', async () => {
    const f0 = 'fragment F0 on Site { id name timezone siteNumber customID org_id }';
    const frags = [f0];
    for (let i = 1; i <= 6; i++) frags.push(`fragment F${i} on Site { ...F${i - 1} ...F${i - 1} ...F${i - 1} }`);
    expect(await refused(`{ sites { data { ...F6 } } } ${frags.join(' ')}`)).toBe('QUERY_TOO_COSTLY');
  });

  it('refuses 15 aliases of the whole sensor list: the cost multiplies by list sizes, not just selections', async () => {
    const aliases = Array.from({ length: 15 }, (_, i) => `s${i}: sensors { data { ${SENSOR_FIELDS} } }`).join(' ');
    expect(await refused(`{ ${aliases} }`)).toBe('QUERY_TOO_COSTLY');
  });

  it('refuses a list nested in a list when the product is too large, fragments included', async () => {
    // 5 × 250 floors × 100 sensors × 23 fields (assumed sizes) ≈ 2.9 M values, 37 selections.
    const floors = Array.from({ length: 5 }, (_, i) => `f${i}: floors { data { sensors { ...S } } }`).join(' ');
    const q = `{ ${floors} } fragment S on Sensor { ${SENSOR_FIELDS} }`;
    expect(await refused(q)).toBe('QUERY_TOO_COSTLY');
  });

  it('accepts one whole sensor list, the full topology, and 15 aliases bounded by id lists', async () => {
    const one = await h.gql(h.tokenA, `{ sensors { data { ${SENSOR_FIELDS} } } }`);
    expect(one.body.errors).toBeUndefined();
    const topology = await h.gql(
      h.tokenA,
      `{ sites { data { id buildings { id floors { id rooms { id sensors { id } } zones { id } hives { id } sensors { ${SENSOR_FIELDS} } } } } } }`,
    );
    expect(topology.body.errors).toBeUndefined();
    const bounded = Array.from(
      { length: 15 },
      (_, i) => `s${i}: sensors(ids: ["a", "b"]) { data { ${SENSOR_FIELDS} } }`,
    ).join(' ');
    expect((await h.gql(h.tokenA, `{ ${bounded} }`)).body.errors).toBeUndefined();
  });

  it('uses the real list sizes when the API knows them instead of the assumed ones', () => {
    const schema = buildSchema(typeDefs);
    const doc = parse(
      `{ ${Array.from({ length: 15 }, (_, i) => `s${i}: sensors { data { ${SENSOR_FIELDS} } }`).join(' ')} }`,
    );
    const codes = (listSize: (t: string, f: string) => number | undefined) =>
      validate(schema, doc, [queryLimitsRule({ ...DEFAULT_LIMITS, listSize })]).map((e) => e.extensions.code);
    expect(codes(() => undefined)).toEqual(['QUERY_TOO_COSTLY']);
    expect(codes((t, f) => (t === 'SensorList' && f === 'data' ? 9 : undefined))).toEqual([]);
    expect(codes((t, f) => (t === 'SensorList' && f === 'data' ? 30_300 : undefined))).toEqual(['QUERY_TOO_COSTLY']);
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
