import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { graphqlSdl } from '../../../src/api/graphql/sdl.js';
import { harness } from '../harness.js';
import { printSchema } from 'graphql';

/**
 * The served GraphQL schema cannot drift: it must equal the committed snapshot
 * (test/api/graphql/schema.snapshot.graphql), and a failure shows the diff. A deliberate
 * change is recorded with `UPDATE_SDL_SNAPSHOT=1 npx vitest run test/api/graphql/sdl-snapshot.test.ts`
 * and reviewed like any other change.
 */
const snapshotPath = new URL('./schema.snapshot.graphql', import.meta.url).pathname;

describe('the GraphQL schema snapshot', () => {
  it('the SDL served at /api/v3/graphql equals the committed snapshot', async () => {
    const h = await harness();
    try {
      const served = `${printSchema(h.app.graphql.schema)}\n`;
      expect(served).toBe(graphqlSdl());
      if (process.env.UPDATE_SDL_SNAPSHOT === '1') writeFileSync(snapshotPath, served);
      // Line by line, so vitest prints the added and removed lines.
      expect(served.split('\n')).toEqual(readFileSync(snapshotPath, 'utf8').split('\n'));
    } finally {
      await h.app.close();
    }
  });

  it("the schema has the reference platform's fields, links and [String!] list arguments", () => {
    const sdl = graphqlSdl();
    for (const needle of [
      'floorID: String!',
      'roomID: String',
      'rotation: Float!',
      'building: Building',
      'room: Room',
      'floor: Floor',
    ])
      expect(sdl).toContain(needle);
    expect(sdl).toMatch(
      /sensors\(ids: \[String!\], mac_addresses: \[String!\], floor_ids: \[String!\], room_ids: \[String!\], hive_ids: \[String!\], hive_serials: \[String!\]\)/,
    );
    expect(sdl).toMatch(/hives\(ids: \[String!\], serial_numbers: \[String!\], returnPlaceholders: Boolean\)/);
    expect(sdl).not.toMatch(/\(ids: \[ID!\]/);
  });
});
