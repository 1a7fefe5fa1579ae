import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './harness.js';

/**
 * Organisation isolation: every REST route and every GraphQL query and mutation, called with
 * organisation A's token on organisation B's ids, behaves exactly as for ids that do not
 * exist — never data. The test counts leaks: B's ids or names appearing in A's answers.
 */
let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.app.close();
});

describe('organisation isolation', () => {
  it("shows organisation A none of organisation B's assets, clients or tags: 0 leaks", async () => {
    const b = h.b;
    const secrets = new Set<string>([
      ...b.sites.map((x) => x.id),
      ...b.buildings.map((x) => x.id),
      ...b.floors.map((x) => x.id),
      ...b.rooms.map((x) => x.id),
      ...b.zones.map((x) => x.id),
      ...b.hives.map((x) => x.id),
      ...b.hives.map((x) => x.serial),
      ...b.sensors.map((x) => x.id),
      ...b.sensors.map((x) => x.mac),
      ...b.clients.map((x) => x.clientId),
      b.org.id,
      b.org.name,
      ...b.sites.map((x) => x.name),
      ...b.buildings.map((x) => x.name),
    ]);
    // A tag of B's, made by B.
    const tagB = (
      (await h.gql(h.tokenB, 'mutation { createTag(input: { name: "b-only" }) { id } }')).body.data as {
        createTag: { id: string };
      }
    ).createTag.id;
    secrets.add(tagB);
    const [site, building, floor, room, zone, hive, sensor] = [
      b.sites[0]!,
      b.buildings[0]!,
      b.floors[0]!,
      b.rooms[0]!,
      b.zones[0]!,
      b.hives[0]!,
      b.sensors[0]!,
    ];
    const operatorA = await h.tokenFor({ orgId: h.a.org.id, operator: true });
    const answers: string[] = [];
    // "Not found" messages may echo the id the caller sent: that is the caller's input, not B's data.
    const scrub = (text: string, vars: Record<string, unknown>): string =>
      Object.values(vars)
        .flat()
        .reduce<string>((t, v) => t.replaceAll(String(v), '<input>'), text);
    const ask = async (query: string, vars: Record<string, unknown> = {}, token = h.tokenA): Promise<void> => {
      const res = await h.gql(token, query, vars);
      answers.push(scrub(JSON.stringify(res.body), vars));
    };
    // Lists: A's own data only.
    for (const list of ['sites', 'buildings', 'floors', 'rooms', 'zones', 'hives', 'sensors'])
      await ask(`{ ${list} { data { id } } }`);
    await ask('{ tags { id name } }');
    // By id / by other keys.
    await ask('query($i: ID) { site(id: $i) { id } }', { i: site.id });
    await ask('query($i: ID) { building(id: $i) { id } }', { i: building.id });
    await ask('query($i: ID) { floor(id: $i) { id } }', { i: floor.id });
    await ask('query($i: ID) { room(id: $i) { id } }', { i: room.id });
    await ask('query($i: ID) { zone(id: $i) { id } }', { i: zone.id });
    await ask(
      'query($i: [ID!]) { floors(ids: $i) { data { id } } rooms(ids: $i) { data { id } } zones(ids: $i) { data { id } } hives(ids: $i) { data { id } } sensors(ids: $i) { data { id } } tags(ids: $i) { id } }',
      {
        i: [floor.id, room.id, zone.id, hive.id, sensor.id, tagB],
      },
    );
    await ask(
      'query($s: String!, $m: String!) { hives(serial_numbers: [$s]) { data { id } } sensors(mac_addresses: [$m]) { data { id } } }',
      { s: hive.serial, m: sensor.mac },
    );
    await ask(
      'query($t: String!) { floorsByTag(tagIDs: [$t]) { data { id } } roomsByTag(tagIDs: [$t]) { data { id } } zonesByTag(tagIDs: [$t]) { data { id } } }',
      { t: tagB },
    );
    // Every mutation on B's ids: NOT_FOUND, nothing changed.
    const mutations: Array<[string, Record<string, unknown>, string?]> = [
      ['mutation($i: ID!) { updateSiteInfo(input: { id: $i, name: "pwned" }) { site { id name } } }', { i: site.id }],
      [
        'mutation($i: ID!) { updateBuildingInfo(input: { id: $i, name: "pwned" }) { building { id } } }',
        { i: building.id },
      ],
      ['mutation($i: ID!) { updateFloorInfo(input: { id: $i, name: "pwned" }) { floor { id } } }', { i: floor.id }],
      [
        'mutation($i: ID!) { updateSensors(sensors: [{ sensor_id: $i, name: "pwned" }]) { sensor_id } }',
        { i: sensor.id },
      ],
      ['mutation($i: String!) { deleteSensors(ids: [$i]) { sensor_id } }', { i: sensor.id }, operatorA],
      [
        'mutation($i: [ID!]!, $t: ID!) { associateTag(input: { ids: $i, tag_id: $t }) { id } }',
        { i: [room.id], t: tagB },
      ],
      [
        'mutation($i: [ID!]!, $t: ID!) { disassociateTag(input: { ids: $i, tag_id: $t }) { id } }',
        { i: [room.id], t: tagB },
      ],
    ];
    for (const [q, vars, token] of mutations) {
      const res = await h.gql(token ?? h.tokenA, q, vars);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      answers.push(scrub(JSON.stringify(res.body), vars));
    }
    // A's own tag cannot be put on B's rooms either.
    const tagA = (
      (await h.gql(h.tokenA, 'mutation { createTag(input: { name: "a" }) { id } }')).body.data as {
        createTag: { id: string };
      }
    ).createTag.id;
    const cross = await h.gql(
      h.tokenA,
      'mutation($i: [ID!]!, $t: ID!) { associateTag(input: { ids: $i, tag_id: $t }) { id } }',
      { i: [room.id], t: tagA },
    );
    expect(cross.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // REST: B's client through A's token.
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await h.app.inject({
        method,
        url: `/api/v1/client/${b.clients[0]!.clientId}`,
        headers: { authorization: `Bearer ${h.tokenA}` },
      });
      expect(res.statusCode).toBe(404);
      answers.push(scrub(res.body, { id: b.clients[0]!.clientId }));
    }
    answers.push(
      (await h.app.inject({ method: 'GET', url: '/api/v1/client', headers: { authorization: `Bearer ${h.tokenA}` } }))
        .body,
    );

    const leaks = [...secrets].filter((s) => answers.some((a) => a.includes(s)));
    expect(leaks).toEqual([]);
    // And B's data is intact.
    const still = await h.gql(h.tokenB, 'query($i: ID) { site(id: $i) { name } sensors { data { id } } }', {
      i: site.id,
    });
    expect(still.body.data).toMatchObject({ site: { name: site.name } });
    expect((still.body.data as { sensors: { data: unknown[] } }).sensors.data).toHaveLength(b.sensors.length);
  });
});
