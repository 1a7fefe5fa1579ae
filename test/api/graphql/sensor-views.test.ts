import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

const FIELDS =
  'id sensor_id client_id name mac_address mode model floor_id room_id hive_id hive_serial height center orientation field_of_view effective_field_of_view sensitivity in_direction is_entrance';
type Sensor = Record<string, unknown> & { id: string };
type Data = Record<string, unknown>;

describe('sensors in GraphQL (plain-property views, views.ts)', () => {
  it('answer the same fields through every query that lists them', async () => {
    const res = await h.gql(
      h.tokenA,
      // The floor by id: over the whole assumed large organisation (250 floors) this traversal
      // is estimated past the answer's budget (limits.ts, 24 MiB).
      `{ floors(ids: ["${h.a.floors[0]!.id}"]) { data { sensors { ${FIELDS} } rooms { sensors { ${FIELDS} } } zones { sensors { ${FIELDS} } } } } sensors { data { ${FIELDS} } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    const d = res.body.data as {
      floors: {
        data: Array<{ sensors: Sensor[]; rooms: Array<{ sensors: Sensor[] }>; zones: Array<{ sensors: Sensor[] }> }>;
      };
      sensors: { data: Sensor[] };
    };
    const canonical = new Map(d.sensors.data.map((s) => [s.id, s] as const));
    const floor = d.floors.data[0]!;
    const listed = [
      ...floor.sensors,
      ...floor.rooms.flatMap((r) => r.sensors),
      ...floor.zones.flatMap((z) => z.sensors),
    ];
    expect(floor.sensors).toHaveLength(h.a.sensors.length);
    expect(listed.length).toBeGreaterThan(floor.sensors.length);
    for (const s of listed) expect(s).toEqual(canonical.get(s.id));
    const model = h.a.sensors.find((s) => s.mode === 'traffic')!;
    const traffic = canonical.get(model.id)!;
    expect(traffic).toMatchObject({
      sensor_id: model.id,
      client_id: h.a.org.id,
      mac_address: model.mac,
      floor_id: model.floorId,
      hive_id: model.hiveId,
      orientation: model.orientationDeg,
      field_of_view: model.fovDeg,
      in_direction: model.roomId,
    });
    expect(traffic.hive_serial).toBe(h.a.hives.find((x) => x.id === model.hiveId)!.serial);
  });

  it('answer the same fields from updateSensors, createSensors and deleteSensors', async () => {
    const target = h.a.sensors[0]!;
    const before = (
      await h.gql(h.tokenA, `query($i: [ID!]) { sensors(ids: $i) { data { ${FIELDS} } } }`, { i: [target.id] })
    ).body.data as { sensors: { data: Sensor[] } };
    const updated = await h.gql(
      h.tokenA,
      `mutation($i: ID!) { updateSensors(sensors: [{ sensor_id: $i, name: "renamed" }]) { ${FIELDS} } }`,
      { i: target.id },
    );
    expect((updated.body.data as Data).updateSensors).toEqual([{ ...before.sensors.data[0], name: 'renamed' }]);
    const hive = h.a.hives[0]!;
    const created = await h.gql(
      h.tokenA,
      `mutation($f: ID!, $h: ID!) { createSensors(input: [{ floor_id: $f, hive_id: $h, name: "new", mode: "presence", center: [1, 1] }]) { ${FIELDS} } }`,
      { f: hive.floorId, h: hive.id },
    );
    const made = ((created.body.data as Data).createSensors as Sensor[])[0]!;
    expect(made).toMatchObject({
      sensor_id: made.id,
      hive_id: hive.id,
      hive_serial: hive.serial,
      client_id: h.a.org.id,
      in_direction: null,
    });
    const listedNew = (
      await h.gql(h.tokenA, `query($i: [ID!]) { sensors(ids: $i) { data { ${FIELDS} } } }`, { i: [made.id] })
    ).body.data as { sensors: { data: Sensor[] } };
    expect(listedNew.sensors.data).toEqual([made]);
    const operator = await h.tokenFor({ orgId: h.a.org.id, operator: true });
    const deleted = await h.gql(operator, `mutation($i: String!) { deleteSensors(ids: [$i]) { ${FIELDS} } }`, {
      i: made.id,
    });
    expect((deleted.body.data as Data).deleteSensors).toEqual([made]);
  });
});
