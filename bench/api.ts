/**
 * API section: GraphQL full-topology query over the fleet scenario (≥ 30,000 sensors),
 * against a baseline that serialises the same records straight from the asset registry
 * (what the query costs beyond producing the bytes); then every device's status fields read
 * from a SQLite store through the asynchronous port, against the same baseline.
 */
import { join } from 'node:path';
import { buildApi } from '../src/api/app.js';
import { catalogueFromScenario } from '../src/assets/from-scenario.js';
import { AccountService } from '../src/api/auth/accounts.js';
import { ALL_SCOPES } from '../src/api/auth/scopes.js';
import { TokenService } from '../src/api/auth/tokens.js';
import { sqliteStore } from '../src/store/sqlite-async.js';
import { VirtualClock } from '../src/core/clock.js';
import { loadScenarioFile } from '../src/scenario/load.js';
import type { ScenarioModel } from '../src/scenario/model.js';

interface Sample {
  wall: number;
  cpu: number;
}

function sample(t0: number, c0: NodeJS.CpuUsage): Sample {
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

/** Every device's status fields (one store record per hive and per sensor). */
const STATUS = `{ sites { data { buildings { floors { hives { id isOnline isStreaming lastHeartbeat }
  sensors { id is_online is_streaming last_heartbeat last_raw_message } } } } } }`;

const TOPOLOGY = `{ sites { data { id name buildings { id name floors { id name rooms { id name } hives { id serial_number }
  sensors { id name mac_address mode model hive_serial center height } } } } } }`;

export async function runApiBench(root: string): Promise<void> {
  const r = loadScenarioFile(join(root, 'scenarios/fleet.yaml'));
  if (!r.ok) throw new Error('fleet.yaml does not load');
  const model = r.model;
  const clock = new VirtualClock(Date.UTC(2026, 10, 22));
  const tokens = await TokenService.create({
    issuer: 'bench',
    audience: 'bench',
    accessTtlS: 3600,
    refreshTtlS: 3600,
    clock,
  });
  const assets = catalogueFromScenario(model);
  const app = await buildApi({
    assets,
    accounts: await AccountService.fromCatalogue(catalogueFromScenario(), clock, { N: 1024, r: 8, p: 1 }),
    tokens,
    clock,
    limits: { maxDepth: 10, maxAliases: 30, maxCost: 1000, maxValues: 50_000_000 },
  });
  const token = (
    await tokens.issueAccess({
      sub: 'bench',
      orgId: model.org.id,
      clientId: 'bench',
      scopes: new Set(ALL_SCOPES),
      kind: 'client',
      operator: false,
    })
  ).token;
  // Wall time and the process's CPU time of each (the machine is shared: CPU time is steadier).
  const query = async (): Promise<Sample> => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const res = await app.inject({
      method: 'POST',
      url: '/api/v3/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: { query: TOPOLOGY },
    });
    if (res.statusCode !== 200) throw new Error(res.body.slice(0, 200));
    return sample(t0, c0);
  };
  const baseline = (): Sample => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    JSON.stringify({
      sites: model.sites,
      buildings: model.buildings,
      floors: model.floors,
      rooms: model.rooms,
      hives: model.hives,
      sensors: model.sensors,
    });
    return sample(t0, c0);
  };
  for (let i = 0; i < 3; i++) {
    await query(); // warm-up: graphql-jit compiles the query after its first run
    baseline();
  }
  const runs = 9;
  const q: Sample[] = [];
  const b: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    q.push(await query());
    b.push(baseline());
  }
  const med = (xs: Sample[], k: keyof Sample): number =>
    xs.map((x) => x[k]).sort((x, y) => x - y)[xs.length >> 1] as number;
  const cells = (xs: Sample[]): string =>
    `wall ${med(xs, 'wall').toFixed(0).padStart(5)} ms  cpu ${med(xs, 'cpu').toFixed(0).padStart(5)} ms`;
  console.log('== api: GraphQL full topology of the fleet scenario');
  console.log(
    `  ${model.sensors.length.toLocaleString('en-US')} sensors, ${model.floors.length} floors, ${model.hives.length} hives; median of ${runs}`,
  );
  console.log(`  JSON.stringify of the registry (baseline)   ${cells(b)}  1.00`);
  console.log(
    `  GraphQL query through Fastify + mercurius   ${cells(q)}  ratio ${(med(q, 'wall') / med(b, 'wall')).toFixed(2)} (wall), ${(med(q, 'cpu') / med(b, 'cpu')).toFixed(2)} (cpu)`,
  );
  await app.close();
  await runStatusBench(model, assets, clock, tokens, token, b, med, cells);
}

/**
 * Device status of the whole fleet: the status fields of every hive and sensor, read from a
 * SQLite store through the asynchronous port (batched per request: status.ts), against the
 * same registry baseline.
 */
async function runStatusBench(
  model: ScenarioModel,
  assets: ReturnType<typeof catalogueFromScenario>,
  clock: VirtualClock,
  tokens: TokenService,
  token: string,
  b: Sample[],
  med: (xs: Sample[], k: keyof Sample) => number,
  cells: (xs: Sample[]) => string,
): Promise<void> {
  const store = sqliteStore(':memory:');
  const t = clock.now();
  const onHive = new Map<string, string[]>();
  for (const s of model.sensors) onHive.set(s.hiveId, [...(onHive.get(s.hiveId) ?? []), s.id]);
  for (const h of model.hives) {
    const hb = {
      hiveId: h.id,
      hiveSerial: h.serial,
      lastHeartbeatMs: t,
      sentAtMs: t,
      state: 'streaming' as const,
      firmwareVersion: '1',
      protocolMinor: 0,
      uptimeMs: 0,
      netPathStability: 1,
      ackedSeq: 0,
      nextSeq: 1,
      bufferedBatches: 0,
      bufferedBytes: 0,
      droppedPackets: 0,
    };
    const health = (onHive.get(h.id) ?? []).map((sensorId) => ({
      sensorId,
      measuredAtMs: t - 30_000,
      batteryLevel: 0.8,
      batteryRuntimeS: 1e7,
      rssiDbm: -60,
      linkPdr: 0.99,
      uptimeMs: 1,
      parent: h.serial,
      hops: 1,
      queueOverflows: 0,
    }));
    store.sync.writeHeartbeat(hb, health);
  }
  const app = await buildApi({
    assets,
    accounts: await AccountService.fromCatalogue(catalogueFromScenario(), clock, { N: 1024, r: 8, p: 1 }),
    tokens,
    clock,
    status: store,
    limits: { maxDepth: 10, maxAliases: 30, maxCost: 1000, maxValues: 50_000_000 },
  });
  const query = async (): Promise<Sample> => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const res = await app.inject({
      method: 'POST',
      url: '/api/v3/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: { query: STATUS },
    });
    if (res.statusCode !== 200 || res.body.includes('"errors"')) throw new Error(res.body.slice(0, 200));
    return sample(t0, c0);
  };
  for (let i = 0; i < 3; i++) await query();
  const q: Sample[] = [];
  for (let i = 0; i < 9; i++) q.push(await query());
  console.log(
    `  device status of every hive and sensor (SQLite store)   ${cells(q)}  ratio ${(med(q, 'wall') / med(b, 'wall')).toFixed(2)} (wall), ${(med(q, 'cpu') / med(b, 'cpu')).toFixed(2)} (cpu) against the same baseline`,
  );
  await app.close();
  await store.close();
}
