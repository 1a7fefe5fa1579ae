import { buildSchema, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { harness } from '../api/harness.js';
import { cli } from './fixtures/run-cli.js';

describe('occusim schema --graphql', () => {
  it('prints the SDL the API serves at /api/v3/graphql', async () => {
    const r = await cli('schema', '--graphql');
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const printed = buildSchema(r.out);
    expect(Object.keys(printed.getQueryType()?.getFields() ?? {})).toContain('sites');
    expect(Object.keys(printed.getMutationType()?.getFields() ?? {})).toEqual(
      expect.arrayContaining(['deleteSensors', 'createRooms', 'associateTag']),
    );
    const h = await harness();
    try {
      expect(`${printSchema(h.app.graphql.schema)}\n`).toBe(r.out);
    } finally {
      await h.app.close();
    }
  });

  it('leaves occusim schema printing the scenario JSON Schema', async () => {
    const r = await cli('schema');
    expect(r.code).toBe(0);
    expect(r.out).not.toMatch(/type Query/);
    expect(JSON.parse(r.out)).toHaveProperty('properties.sites');
  });
});
