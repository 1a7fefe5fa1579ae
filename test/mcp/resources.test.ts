import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE_POLL_MS } from '../../src/mcp/watch.js';
import { apiFor } from './api.js';
import { connectInMemory, type Session } from './connect.js';
import { envOf } from './org.js';
import { twoOrganisations } from './served.js';

/**
 * Resources (issue 28, item 1): the organisation's assets under stable URIs, read as JSON (a
 * floor's plan also as SVG), only the caller's organisation's; a room added by a GraphQL
 * mutation is announced with `notifications/resources/list_changed`.
 */
let platform: Awaited<ReturnType<typeof twoOrganisations>>;
let session: Session;

beforeAll(async () => {
  platform = await twoOrganisations();
  session = await connectInMemory(envOf(platform.own, platform.api));
}, 60_000);

afterAll(async () => {
  await session?.close();
  await platform?.close();
});

const read = async (uri: string): Promise<{ mimeType?: string; text: string }> =>
  (await session.client.readResource({ uri })).contents[0] as { mimeType?: string; text: string };

describe('resources', () => {
  it('list every asset of the organisation with its plans and occupancy, and nothing of the other', async () => {
    const { resources, nextCursor } = await session.client.listResources();
    expect(nextCursor).toBeUndefined();
    const uris = resources.map((r) => r.uri);
    const m = platform.own;
    for (const [plural, list] of [
      ['sites', m.sites],
      ['buildings', m.buildings],
      ['floors', m.floors],
      ['rooms', m.rooms],
      ['zones', m.zones],
      ['hives', m.hives],
      ['sensors', m.sensors],
    ] as const) {
      for (const a of list) expect(uris).toContain(`occusim://${plural}/${a.id}`);
    }
    for (const f of m.floors)
      expect(uris).toEqual(
        expect.arrayContaining([
          `occusim://floors/${f.id}/plan.json`,
          `occusim://floors/${f.id}/plan.svg`,
          `occusim://floors/${f.id}/occupancy`,
        ]),
      );
    for (const r of m.rooms) expect(uris).toContain(`occusim://rooms/${r.id}/occupancy`);
    const theirs = new Set([...platform.other.rooms, ...platform.other.sensors].map((a) => a.id));
    expect(uris.filter((u) => [...theirs].some((id) => u.includes(id)))).toEqual([]);
    expect(new Set(uris).size).toBe(uris.length);
  });

  it('have a template per kind, plans and occupancy', async () => {
    const { resourceTemplates } = await session.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'occusim://sites/{id}',
      'occusim://buildings/{id}',
      'occusim://floors/{id}',
      'occusim://rooms/{id}',
      'occusim://zones/{id}',
      'occusim://hives/{id}',
      'occusim://sensors/{id}',
      'occusim://floors/{id}/plan.json',
      'occusim://floors/{id}/plan.svg',
      'occusim://floors/{id}/occupancy',
      'occusim://rooms/{id}/occupancy',
      'occusim://zones/{id}/occupancy',
    ]);
  });

  it('read a floor as its record, its plan as JSON and as SVG, the same bytes each time', async () => {
    const floor = platform.own.floors[0] as { id: string; name: string };
    const rec = JSON.parse((await read(`occusim://floors/${floor.id}`)).text) as {
      type: string;
      name: string;
      children: Array<{ uri: string }>;
    };
    expect([rec.type, rec.name]).toEqual(['floor', floor.name]);
    for (const c of rec.children) expect(c.uri).toMatch(/^occusim:\/\/(rooms|zones)\//);
    const plan = JSON.parse((await read(`occusim://floors/${floor.id}/plan.json`)).text) as {
      rooms: Array<{ name: string; coordinates: number[][] }>;
    };
    expect(plan.rooms.map((r) => r.name).sort()).toEqual(
      platform.own.rooms
        .filter((r) => r.floorId === floor.id)
        .map((r) => r.name)
        .sort(),
    );
    const svg = await read(`occusim://floors/${floor.id}/plan.svg`);
    expect(svg.mimeType).toBe('image/svg+xml');
    expect(svg.text).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    for (const r of plan.rooms) expect(svg.text).toContain(`>${r.name}</text>`);
    expect((await read(`occusim://floors/${floor.id}/plan.svg`)).text).toBe(svg.text);
  });

  it('refuse an unknown or foreign URI with -32002 and a bad cursor with -32602', async () => {
    for (const uri of [
      `occusim://rooms/${platform.other.rooms[0]?.id}`,
      'occusim://rooms/room_0000000000000000',
      `occusim://rooms/${platform.own.rooms[0]?.id}/plan.svg`,
      'https://example.com/x',
      'occusim://printers/p_123',
    ]) {
      await expect(session.client.readResource({ uri })).rejects.toMatchObject({ code: -32002 });
    }
    await expect(session.client.listResources({ cursor: 'abc' })).rejects.toMatchObject({ code: -32602 });
  });

  it('announce a room added by a GraphQL mutation with list_changed', async () => {
    let changed = 0;
    session.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changed++);
    const m = platform.own;
    const api = await apiFor({
      api: platform.api,
      clientId: m.clients[0]?.clientId ?? '',
      clientSecret: m.clients[0]?.secret ?? '',
      audience: envOf(m, platform.api).SERVICE_AUDIENCE as string,
    });
    await new Promise((r) => setTimeout(r, CATALOGUE_POLL_MS + 1000));
    expect(changed).toBe(0);
    const floor = m.floors[0]?.id as string;
    const made = await api.graphql<{ createRooms: Array<{ id: string }> }>(
      `mutation { createRooms(input: [{ floor_id: "${floor}", name: "Phone booth", coordinates: [[0,0],[1,0],[1,1],[0,1]] }]) { id } }`,
    );
    const id = made.createRooms[0]?.id as string;
    for (let i = 0; i < 30 && changed === 0; i++) await new Promise((r) => setTimeout(r, 500));
    expect(changed).toBe(1);
    expect((await session.client.listResources()).resources.map((r) => r.uri)).toContain(`occusim://rooms/${id}`);
  }, 30_000);
});
