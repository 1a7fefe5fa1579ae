import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

type Data = Record<string, Array<Record<string, unknown>>>;

describe('GraphQL create mutations', () => {
  it('creates a floor, a room, a zone, a hive and a sensor that queries then find', async () => {
    const building = h.a.buildings[0]!;
    const floor = (
      await h.gql(
        h.tokenA,
        'mutation($b: ID!) { createFloors(input: [{ building_id: $b, name: "Level 1", floorNumber: 1 }]) { id name floorNumber } }',
        { b: building.id },
      )
    ).body.data as Data;
    const floorId = String(floor.createFloors![0]!.id);
    expect(floorId).toMatch(/^space_/);
    const room = (
      await h.gql(
        h.tokenA,
        'mutation($f: ID!) { createRooms(input: [{ floor_id: $f, name: "Lab", coordinates: [[0,0],[5,0],[5,4],[0,4]] }]) { id area { value } } }',
        { f: floorId },
      )
    ).body.data as Data;
    const roomId = String(room.createRooms![0]!.id);
    expect(room.createRooms![0]!.area).toEqual({ value: 20 });
    const zone = (
      await h.gql(
        h.tokenA,
        'mutation($f: ID!, $r: ID) { createZones(input: [{ floor_id: $f, room_id: $r, name: "Bench", coordinates: [[0,0],[2,0],[2,2]] }]) { id room_id } }',
        { f: floorId, r: roomId },
      )
    ).body.data as Data;
    expect(zone.createZones![0]!.room_id).toBe(roomId);
    const hive = (
      await h.gql(
        h.tokenA,
        'mutation($f: ID!) { createHives(input: [{ floor_id: $f, name: "H2", serial_number: "HVNEW001", hiveType: "cellular" }]) { id serial_number hiveType } }',
        { f: floorId },
      )
    ).body.data as Data;
    const hiveId = String(hive.createHives![0]!.id);
    const sensor = await h.gql(
      h.tokenA,
      'mutation($f: ID!, $h: ID!, $r: ID) { createSensors(input: [{ floor_id: $f, hive_id: $h, room_id: $r, name: "lab-1", mode: "presence", center: [2.5, 2], height: 3.2 }]) { id mac_address hive_serial room { name } } }',
      { f: floorId, h: hiveId, r: roomId },
    );
    expect(sensor.body.errors).toBeUndefined();
    expect((sensor.body.data as Data).createSensors![0]).toMatchObject({
      hive_serial: 'HVNEW001',
      room: { name: 'Lab' },
    });
    const topo = await h.gql(
      h.tokenA,
      'query($f: ID) { floor(id: $f) { name rooms { name sensors { name } } zones { name } hives { serial_number } sensors { name } } }',
      { f: floorId },
    );
    expect(topo.body.data).toEqual({
      floor: {
        name: 'Level 1',
        rooms: [{ name: 'Lab', sensors: [{ name: 'lab-1' }] }],
        zones: [{ name: 'Bench' }],
        hives: [{ serial_number: 'HVNEW001' }],
        sensors: [{ name: 'lab-1' }],
      },
    });
  });

  it('refuses bad input whole, creating nothing', async () => {
    const floor = h.a.floors[0]!;
    const before = ((await h.gql(h.tokenA, '{ rooms { data { id } } }')).body.data as { rooms: { data: unknown[] } })
      .rooms.data.length;
    const bowtie = await h.gql(
      h.tokenA,
      'mutation($f: ID!) { createRooms(input: [{ floor_id: $f, name: "ok", coordinates: [[0,0],[1,0],[1,1]] }, { floor_id: $f, name: "bad", coordinates: [[0,0],[4,4],[4,0],[0,4]] }]) { id } }',
      { f: floor.id },
    );
    expect(bowtie.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const after = ((await h.gql(h.tokenA, '{ rooms { data { id } } }')).body.data as { rooms: { data: unknown[] } })
      .rooms.data.length;
    expect(after).toBe(before);
    const high = await h.gql(
      h.tokenA,
      'mutation($f: ID!, $h: ID!) { createSensors(input: [{ floor_id: $f, hive_id: $h, name: "x", mode: "presence", center: [1,1], height: 9 }]) { id } }',
      { f: floor.id, h: h.a.hives[0]!.id },
    );
    expect(high.body.errors?.[0]?.message).toMatch(/2\.4–4\.6/);
    const serial = await h.gql(
      h.tokenA,
      'mutation($f: ID!) { createHives(input: [{ floor_id: $f, name: "x", serial_number: "a/b" }]) { id } }',
      { f: floor.id },
    );
    expect(serial.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('cannot create anything in another organisation', async () => {
    const res = await h.gql(
      h.tokenA,
      'mutation($f: ID!) { createRooms(input: [{ floor_id: $f, name: "x", coordinates: [[0,0],[1,0],[1,1]] }]) { id } }',
      { f: h.b.floors[0]!.id },
    );
    expect(res.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('create mutation bounds (issue 16, finding 10)', () => {
  const create = (room: string | null, name = 'probe') =>
    h.gql(
      h.tokenA,
      'mutation($f: ID!, $h: ID!, $r: ID, $n: String!) { createSensors(input: [{ floor_id: $f, hive_id: $h, room_id: $r, name: $n, mode: "presence", center: [1, 1] }]) { id room { name } } }',
      {
        f: h.a.floors[0]!.id,
        h: h.a.hives[0]!.id,
        r: room,
        n: name,
      },
    );

  it("createSensors refuses a room_id that does not exist or is another organisation's: NOT_FOUND naming the input", async () => {
    const count = async () =>
      ((await h.gql(h.tokenA, '{ sensors { data { id } } }')).body.data as { sensors: { data: unknown[] } }).sensors
        .data.length;
    const before = await count();
    for (const room of ['room_doesnotexist', h.b.rooms[0]!.id]) {
      const res = await create(room);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(res.body.errors?.[0]?.message).toMatch(/input\[0\]\.room_id: room .* does not exist on floor/);
    }
    expect(await count()).toBe(before);
  });

  it("createSensors accepts a room of the sensor's own floor", async () => {
    const room = h.a.rooms.find((r) => r.floorId === h.a.floors[0]!.id)!;
    const res = await create(room.id, 'own-room');
    expect(res.body.errors).toBeUndefined();
    expect((res.body.data as Data).createSensors![0]!.room).toEqual({ name: room.name });
  });

  it.each([
    ['NUL', 'a\u0000b'],
    ['right-to-left override', 'a\u202Eb'],
    ['201 characters', 'n'.repeat(201)],
  ])('refuses a sensor name with %s as BAD_USER_INPUT', async (_what, name) => {
    const res = await create(null, name);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors?.[0]?.message).toMatch(/input\[0\]\.name/);
  });

  it('refuses control characters in renames too', async () => {
    const res = await h.gql(
      h.tokenA,
      'mutation($i: ID!) { updateSensors(sensors: [{ sensor_id: $i, name: "x\\u202Ey" }]) { sensor_id } }',
      { i: h.a.sensors[0]!.id },
    );
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
