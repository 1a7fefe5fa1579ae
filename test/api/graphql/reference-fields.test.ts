import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../harness.js';

/**
 * The reference platform's GraphQL surface (platform-reference §2) beyond the spec: camelCase
 * twins, object links, rotation, and `[String!]` list arguments, as its clients select them.
 */
let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

type Data = Record<string, { data: Array<Record<string, unknown>> }>;
async function query(q: string, variables?: Record<string, unknown>): Promise<Data> {
  const res = await h.gql(h.tokenA, q, variables);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data as Data;
}

describe("the reference platform's fields and links", () => {
  it('rooms and zones answer floorID, roomID, rotation and their floor, room and building links from the catalogue', async () => {
    const zone = h.a.zones[0]!;
    const d = await query(
      'query($ids: [String!]) { zones(ids: $ids) { data { id floorID floor_id roomID room_id rotation area { unit } note metadata floor { id building { id site_id } } room { id floorID floor { id } } } } }',
      { ids: [zone.id] },
    );
    const z = d.zones!.data[0]!;
    expect(z).toMatchObject({
      id: zone.id,
      floorID: zone.floorId,
      floor_id: zone.floorId,
      roomID: zone.roomId,
      room_id: zone.roomId,
      rotation: 0,
      note: null,
      metadata: null,
    });
    expect(z.floor).toEqual({
      id: zone.floorId,
      building: { id: h.a.floors[0]!.buildingId, site_id: h.a.sites[0]!.id },
    });
    expect(z.room).toEqual({ id: zone.roomId, floorID: zone.floorId, floor: { id: zone.floorId } });
  });

  it('sensors filter by floor, room, hive and hive serial, all arguments typed [String!]', async () => {
    const office = h.a.rooms.find((r) => r.name === 'Open office')!;
    const hive = h.a.hives[0]!;
    const d = await query(
      'query($f: [String!], $r: [String!], $h: [String!], $s: [String!]) { a: sensors(floor_ids: $f) { data { id } } b: sensors(room_ids: $r) { data { id roomID } } c: sensors(hive_ids: $h, hive_serials: $s) { data { id } } }',
      { f: [h.a.floors[0]!.id], r: [office.id], h: [hive.id], s: [hive.serial] },
    );
    expect(d.a!.data).toHaveLength(h.a.sensors.length);
    expect(d.b!.data.map((s) => s.id).sort()).toEqual(
      h.a.sensors
        .filter((s) => s.roomId === office.id)
        .map((s) => s.id)
        .sort(),
    );
    expect(d.b!.data.every((s) => s.roomID === office.id)).toBe(true);
    expect(d.c!.data).toHaveLength(h.a.sensors.filter((s) => s.hiveId === hive.id).length);
  });

  it("accepts list variables typed [ID!] (occusim's earlier clients) as well as [String!], and String for ID arguments", async () => {
    const room = h.a.rooms[0]!;
    const asId = await query('query($ids: [ID!]) { rooms(ids: $ids) { data { id } } }', { ids: [room.id] });
    const asString = await query('query($ids: [String!]) { rooms(ids: $ids) { data { id } } }', { ids: [room.id] });
    expect(asId).toEqual(asString);
    const single = await h.gql(h.tokenA, 'query($id: String) { room(id: $id) { id } }', { id: room.id });
    expect(single.body).toEqual({ data: { room: { id: room.id } } });
    // A variable used where both an ID and a String are expected keeps its declared type, and stays refused where it does not fit.
    const wrong = await h.gql(h.tokenA, 'query($n: Int) { rooms(ids: [$n]) { data { id } } }', { n: 1 });
    expect(wrong.body.errors?.[0]?.message).toMatch(
      /Variable "\$n" of type "Int" used in position expecting type "String!"/,
    );
  });

  it('hives answer floorID, roomID and their floor; floors answer their building, status and plans', async () => {
    const hive = h.a.hives[0]!;
    const d = await query(
      'query($s: [String!]) { hives(serial_numbers: $s, returnPlaceholders: true) { data { id floorID roomID floor { id } } } floors { data { id building { id } installation_status service_status floor_plans { floor_plan_id coordinates } } } }',
      { s: [hive.serial] },
    );
    expect(d.hives!.data).toEqual([
      { id: hive.id, floorID: hive.floorId, roomID: hive.roomId, floor: { id: hive.floorId } },
    ]);
    const floor = d.floors!.data[0]!;
    expect(floor).toMatchObject({
      building: { id: h.a.floors[0]!.buildingId },
      installation_status: 'installed',
      service_status: 'active',
    });
    expect((floor.floor_plans as Array<{ coordinates: unknown[] }>)[0]!.coordinates.length).toBeGreaterThanOrEqual(3);
  });
});
