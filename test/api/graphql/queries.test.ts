import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../src/api/auth/scopes.js';
import { harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

const TOPOLOGY = /* GraphQL */ `
  {
    sites {
      data {
        id
        name
        timezone
        org_id
        buildings {
          id
          name
          capacity {
            max
            mid
          }
          address {
            lines
            country
          }
          floors {
            id
            name
            floorNumber
            timezone
            rooms {
              id
              room_id
              name
              coordinates
              area {
                value
                unit
              }
              sensors {
                sensor_id
              }
            }
            zones {
              id
              name
              room_id
            }
            hives {
              id
              serial_number
              isOnline
              hiveType
            }
            sensors {
              id
              sensor_id
              name
              mac_address
              mode
              model
              height
              center
              orientation
              field_of_view
              sensitivity
              hive_serial
              room {
                name
              }
              door_line
              is_entrance
            }
          }
        }
      }
    }
  }
`;

describe('GraphQL asset queries', () => {
  it("traverses the whole topology of the caller's organisation, lists wrapped in data", async () => {
    const res = await h.gql(h.tokenA, TOPOLOGY);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const site = (res.body.data as { sites: { data: Array<Record<string, unknown>> } }).sites.data[0] as {
      org_id: string;
      timezone: string;
      buildings: Array<{
        floors: Array<{
          rooms: Array<{ coordinates: number[][]; area: { value: number } }>;
          sensors: Array<{ mode: string; door_line: unknown; mac_address: string }>;
        }>;
      }>;
    };
    expect(site.org_id).toBe(h.a.org.id);
    expect(site.timezone).toBe('Europe/Paris');
    const floor = site.buildings[0]!.floors[0]!;
    expect(floor.rooms).toHaveLength(h.a.rooms.length);
    expect(floor.rooms[0]!.coordinates[0]).toHaveLength(2);
    expect(floor.rooms[0]!.area.value).toBeGreaterThan(0);
    expect(floor.sensors).toHaveLength(h.a.sensors.length);
    const traffic = floor.sensors.find((s) => s.mode === 'traffic');
    expect(traffic?.door_line).toHaveLength(2);
    expect(floor.sensors[0]!.mac_address).toMatch(/^00-17-0d-00-00-/);
  });

  it('finds by id, by customID-less lookups, by MAC and by hive serial', async () => {
    const room = h.a.rooms[1]!;
    const sensor = h.a.sensors[0]!;
    const hive = h.a.hives[0]!;
    const res = await h.gql(
      h.tokenA,
      `query($room: ID, $mac: String!, $serial: String!) {
        room(id: $room) { id name floor_id }
        sensors(mac_addresses: [$mac]) { data { id } }
        hives(serial_numbers: [$serial]) { data { id serialNumber } }
      }`,
      { room: room.id, mac: sensor.mac, serial: hive.serial },
    );
    expect(res.body.data).toEqual({
      room: { id: room.id, name: room.name, floor_id: room.floorId },
      sensors: { data: [{ id: sensor.id }] },
      hives: { data: [{ id: hive.id, serialNumber: hive.serial }] },
    });
  });

  it('tags floors, rooms and zones and queries occupancy spaces by tag', async () => {
    const [r1, r2] = [h.a.rooms[1]!, h.a.rooms[2]!];
    const created = await h.gql(
      h.tokenA,
      'mutation { createTag(input: { name: "bookable" }) { id name organization_id } }',
    );
    const tag = (created.body.data as { createTag: { id: string; organization_id: string } }).createTag;
    expect(tag.organization_id).toBe(h.a.org.id);
    const assoc = await h.gql(
      h.tokenA,
      'mutation($ids: [ID!]!, $t: ID!) { associateTag(input: { ids: $ids, tag_id: $t }) { rooms { id } } }',
      { ids: [r1.id, r2.id], t: tag.id },
    );
    expect((assoc.body.data as { associateTag: { rooms: unknown[] } }).associateTag.rooms).toHaveLength(2);
    const byTag = await h.gql(
      h.tokenA,
      'query($t: String!) { roomsByTag(tagIDs: [$t]) { data { id tags { name } } } }',
      { t: tag.id },
    );
    expect(
      (byTag.body.data as { roomsByTag: { data: Array<{ id: string }> } }).roomsByTag.data.map((r) => r.id).sort(),
    ).toEqual([r1.id, r2.id].sort());
    await h.gql(
      h.tokenA,
      'mutation($ids: [ID!]!, $t: ID!) { disassociateTag(input: { ids: $ids, tag_id: $t }) { id } }',
      { ids: [r1.id], t: tag.id },
    );
    const after = await h.gql(h.tokenA, 'query($t: String!) { roomsByTag(tagIDs: [$t]) { data { id } } }', {
      t: tag.id,
    });
    expect((after.body.data as { roomsByTag: { data: Array<{ id: string }> } }).roomsByTag.data).toEqual([
      { id: r2.id },
    ]);
  });

  it("answers associateTag and disassociateTag in the reference's shape (tag { … }) and in the Tag's own fields, in one answer", async () => {
    const [r1, z1] = [h.a.rooms[3]!, h.a.zones[0]!];
    const tag = (
      (await h.gql(h.tokenA, 'mutation { createTag(input: { name: "quiet-zone" }) { id } }')).body.data as {
        createTag: { id: string };
      }
    ).createTag;
    const both = await h.gql(
      h.tokenA,
      'mutation($i: [String!]!, $t: ID!) { associateTag(input: { ids: $i, tag_id: $t }) { tag { id name organization_id rooms { id } zones { id } } id name rooms { id } } }',
      { i: [r1.id, z1.id], t: tag.id },
    );
    expect(both.body).toEqual({
      data: {
        associateTag: {
          tag: {
            id: tag.id,
            name: 'quiet-zone',
            organization_id: h.a.org.id,
            rooms: [{ id: r1.id }],
            zones: [{ id: z1.id }],
          },
          id: tag.id,
          name: 'quiet-zone',
          rooms: [{ id: r1.id }],
        },
      },
    });
    const removed = await h.gql(
      h.tokenA,
      'mutation($i: [String!]!, $t: ID!) { disassociateTag(input: { ids: $i, tag_id: $t }) { tag { rooms { id } zones { id } } } }',
      { i: [r1.id], t: tag.id },
    );
    expect(removed.body).toEqual({ data: { disassociateTag: { tag: { rooms: [], zones: [{ id: z1.id }] } } } });
  });

  it('renames sites, buildings, floors and sensors', async () => {
    const [site, building, floor, sensor] = [h.a.sites[0]!, h.a.buildings[0]!, h.a.floors[0]!, h.a.sensors[1]!];
    const res = await h.gql(
      h.tokenA,
      `mutation($s: ID!, $b: ID!, $f: ID!, $x: ID!) {
        updateSiteInfo(input: { id: $s, name: "Siege" }) { site { id name timezone } }
        updateBuildingInfo(input: { id: $b, name: "Tour A", customID: "B-01" }) { building { name customID } }
        updateFloorInfo(input: { id: $f, name: "RDC" }) { floor { name } }
        updateSensors(sensors: [{ sensor_id: $x, name: "desk-cluster" }]) { sensor_id name }
      }`,
      { s: site.id, b: building.id, f: floor.id, x: sensor.id },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data).toMatchObject({
      updateSiteInfo: { site: { name: 'Siege', timezone: 'Europe/Paris' } },
      updateBuildingInfo: { building: { name: 'Tour A', customID: 'B-01' } },
      updateFloorInfo: { floor: { name: 'RDC' } },
      updateSensors: [{ sensor_id: sensor.id, name: 'desk-cluster' }],
    });
    const byCustom = await h.gql(h.tokenA, '{ building(customID: "B-01") { id } }');
    expect(byCustom.body.data).toEqual({ building: { id: building.id } });
  });

  it('keeps deleteSensors for the operator: an ordinary token gets FORBIDDEN', async () => {
    const sensor = h.a.sensors[2]!;
    const ordinary = await h.gql(h.tokenA, 'mutation($i: String!) { deleteSensors(ids: [$i]) { sensor_id } }', {
      i: sensor.id,
    });
    expect(ordinary.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const operator = await h.tokenFor({ orgId: h.a.org.id, operator: true });
    const ok = await h.gql(operator, 'mutation($i: String!) { deleteSensors(ids: [$i]) { sensor_id name } }', {
      i: sensor.id,
    });
    expect(ok.body.data).toEqual({ deleteSensors: [{ sensor_id: sensor.id, name: sensor.name }] });
    const gone = await h.gql(h.tokenA, 'query($i: ID!) { sensors(ids: [$i]) { data { id } } }', { i: sensor.id });
    expect(gone.body.data).toEqual({ sensors: { data: [] } });
  });

  it('types deleteSensors(ids: [String!]) as the spec writes it: its variable type validates, and no list deletes nothing', async () => {
    const sensor = h.a.sensors[3]!;
    const operator = await h.tokenFor({ orgId: h.a.org.id, operator: true });
    const none = await h.gql(operator, 'mutation($ids: [String!]) { deleteSensors(ids: $ids) { sensor_id } }', {});
    expect(none.body).toEqual({ data: { deleteSensors: [] } });
    const ok = await h.gql(operator, 'mutation($ids: [String!]) { deleteSensors(ids: $ids) { sensor_id } }', {
      ids: [sensor.id],
    });
    expect(ok.body).toEqual({ data: { deleteSensors: [{ sensor_id: sensor.id }] } });
    // The earlier non-null variable type is still accepted in the nullable position.
    const again = await h.gql(operator, 'mutation($ids: [String!]!) { deleteSensors(ids: $ids) { sensor_id } }', {
      ids: [sensor.id],
    });
    expect(again.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('enforces scopes per resource', async () => {
    const readOnlySpaces = await h.tokenFor({ orgId: h.a.org.id, scopes: new Set(['read:spaces']) });
    expect((await h.gql(readOnlySpaces, '{ sites { data { id } } }')).body.errors).toBeUndefined();
    const sensors = await h.gql(readOnlySpaces, '{ sensors { data { id } } }');
    expect(sensors.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const rename = await h.gql(
      readOnlySpaces,
      `mutation { updateFloorInfo(input: { id: "${h.a.floors[0]!.id}", name: "x" }) { floor { id } } }`,
    );
    expect(rename.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const all = await h.tokenFor({ orgId: h.a.org.id, scopes: new Set(ALL_SCOPES) });
    expect((await h.gql(all, '{ sensors { data { id } } }')).body.errors).toBeUndefined();
  });

  it('answers 401 without a token', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v3/graphql',
      payload: { query: '{ sites { data { id } } }' },
    });
    expect(res.statusCode).toBe(401);
  });
});
