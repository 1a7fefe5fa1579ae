import { describe, expect, it } from 'vitest';
import { buildApi } from '../../../src/api/app.js';
import { AccountService } from '../../../src/api/auth/accounts.js';
import { ALL_SCOPES } from '../../../src/api/auth/scopes.js';
import { TokenService } from '../../../src/api/auth/tokens.js';
import type { StatusSource } from '../../../src/api/status.js';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { sqliteStore } from '../../../src/store/sqlite-async.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import { TEST_COST } from '../harness.js';

/**
 * Device status through GraphQL over a real store: a sensor list whose items ask for status
 * fields reads them in one store call before its items resolve (status-preload.ts), and the
 * answers are those of the per-field path (a single sensor, where nothing is preloaded).
 */
const loaded = loadScenarioFile(new URL('../../../scenarios/office-day.yaml', import.meta.url).pathname);
if (!loaded.ok) throw new Error('office-day does not load');
const model = loaded.model;
const T = model.startMs + 3_600_000;

async function api() {
  const store = sqliteStore(':memory:');
  // Half the sensors heard recently, a quarter long ago, the rest never; every hive heard.
  for (const [h, hive] of model.hives.entries()) {
    const sensors = model.sensors.filter((s) => s.hiveId === hive.id);
    const health = sensors.flatMap((s, i) =>
      (i + h) % 4 === 3
        ? []
        : [
            {
              sensorId: s.id,
              measuredAtMs: (i + h) % 4 === 2 ? T - 3_600_000 : T - 20_000,
              batteryLevel: 0.5,
              batteryRuntimeS: 8_640_000,
              rssiDbm: -70,
              linkPdr: 0.9,
              uptimeMs: 1,
              parent: hive.serial,
              hops: 1,
              queueOverflows: 0,
            },
          ],
    );
    await store.writeHeartbeat(
      {
        hiveId: hive.id,
        hiveSerial: hive.serial,
        lastHeartbeatMs: T,
        sentAtMs: T,
        state: 'streaming',
        firmwareVersion: '1',
        protocolMinor: 0,
        uptimeMs: 0,
        netPathStability: 1,
        ackedSeq: 0,
        nextSeq: 1,
        bufferedBatches: 0,
        bufferedBytes: 0,
        droppedPackets: 0,
      },
      health,
    );
  }
  const calls: number[] = [];
  const status: StatusSource = {
    hiveStatuses: (ids) => store.hiveStatuses(ids),
    sensorStatuses: (ids) => (calls.push(ids.length), store.sensorStatuses(ids)),
  };
  const clock = new VirtualClock(T);
  const tokens = await TokenService.create({ issuer: 'i', audience: 'a', accessTtlS: 3600, refreshTtlS: 3600, clock });
  const app = await buildApi({
    assets: catalogueFromScenario(model),
    accounts: await AccountService.fromCatalogue(catalogueFromScenario(model), clock, TEST_COST),
    tokens,
    clock,
    status,
  });
  const token = (
    await tokens.issueAccess({
      sub: 't',
      orgId: model.org.id,
      clientId: 't',
      scopes: new Set(ALL_SCOPES),
      kind: 'client',
      operator: false,
    })
  ).token;
  const gql = async (query: string): Promise<unknown> => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v3/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: { query },
    });
    const body = res.json() as { data?: unknown; errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
  return { app, store, calls, gql };
}

const FIELDS =
  'id is_online is_streaming last_heartbeat last_raw_message last_occupancy_message power_type battery_change_by_date battery_level';

describe('sensor status in GraphQL lists', () => {
  it('reads a listed page of sensors in one store call and answers as the per-sensor path does', async () => {
    const { app, store, calls, gql } = await api();
    const listed = (await gql(`{ sensors { data { ${FIELDS} } } }`)) as {
      sensors: { data: Array<{ id: string; is_online: boolean; battery_level: number | null }> };
    };
    expect(calls).toEqual([model.sensors.length]);
    const rows = listed.sensors.data;
    expect(rows.length).toBe(model.sensors.length);
    expect(new Set(rows.map((r) => r.is_online))).toEqual(new Set([true, false]));
    // The stored health reports' level 0.5 reads 50 %; a sensor never heard has none.
    expect(new Set(rows.map((r) => r.battery_level))).toEqual(new Set([50, null]));
    // The same fields, one sensor per request: the same answers.
    for (const r of rows.slice(0, 12)) {
      const one = (await gql(`{ sensors(ids: ["${r.id}"]) { data { ${FIELDS} } } }`)) as {
        sensors: { data: unknown[] };
      };
      expect(one.sensors.data).toEqual([r]);
    }
    await app.close();
    await store.close();
  });

  it("reads each floor's sensors in one call when a topology query asks for their status (fragments too), and none when it does not", async () => {
    const { app, store, calls, gql } = await api();
    const q = (fields: string, tail = '') =>
      `{ sites { data { buildings { floors { id sensors { ${fields} } } } } } }${tail}`;
    await gql(q('id name'));
    expect(calls).toEqual([]);
    const plain = await gql(q('id is_online last_raw_message'));
    expect(calls.reduce((a, b) => a + b, 0)).toBe(model.sensors.length);
    expect(calls.length).toBeLessThanOrEqual(model.floors.length);
    calls.length = 0;
    const viaFragment = await gql(q('...S', ' fragment S on Sensor { id is_online last_raw_message }'));
    expect(viaFragment).toEqual(plain);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(model.sensors.length);
    await app.close();
    await store.close();
  });
});
