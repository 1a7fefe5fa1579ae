/**
 * API section: GraphQL full-topology query over the fleet scenario (≥ 30,000 sensors),
 * against a baseline that serialises the same records straight from the asset registry
 * (what the query costs beyond producing the bytes).
 */
import { join } from 'node:path';
import { buildApi } from '../src/api/app.js';
import { AssetService } from '../src/api/assets/asset-service.js';
import { AccountService } from '../src/api/auth/accounts.js';
import { ALL_SCOPES } from '../src/api/auth/scopes.js';
import { TokenService } from '../src/api/auth/tokens.js';
import { VirtualClock } from '../src/core/clock.js';
import { loadScenarioFile } from '../src/scenario/load.js';

const TOPOLOGY = `{ sites { data { id name buildings { id name floors { id name rooms { id name } hives { id serial_number }
  sensors { id name mac_address mode model hive_serial center height } } } } } }`;

export async function runApiBench(root: string): Promise<void> {
  const r = loadScenarioFile(join(root, 'scenarios/fleet.yaml'));
  if (!r.ok) throw new Error('fleet.yaml does not load');
  const model = r.model;
  const clock = new VirtualClock(Date.UTC(2026, 10, 22));
  const tokens = await TokenService.create({ issuer: 'bench', audience: 'bench', accessTtlS: 3600, refreshTtlS: 3600, clock });
  const assets = new AssetService([model]);
  const app = await buildApi({ assets, accounts: await AccountService.fromModels([], clock, { N: 1024, r: 8, p: 1 }), tokens, clock, limits: { maxDepth: 10, maxAliases: 30, maxCost: 1000 } });
  const token = (await tokens.issueAccess({ sub: 'bench', orgId: model.org.id, clientId: 'bench', scopes: new Set(ALL_SCOPES), kind: 'client', operator: false })).token;
  const query = async (): Promise<number> => {
    const t0 = performance.now();
    const res = await app.inject({ method: 'POST', url: '/api/v3/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query: TOPOLOGY } });
    if (res.statusCode !== 200) throw new Error(res.body.slice(0, 200));
    return performance.now() - t0;
  };
  const baseline = (): number => {
    const t0 = performance.now();
    JSON.stringify({ sites: model.sites, buildings: model.buildings, floors: model.floors, rooms: model.rooms, hives: model.hives, sensors: model.sensors });
    return performance.now() - t0;
  };
  await query(); // warm-up
  baseline();
  const runs = 5;
  const q: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    q.push(await query());
    b.push(baseline());
  }
  const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1] as number;
  console.log('== api: GraphQL full topology of the fleet scenario');
  console.log(`  ${model.sensors.length.toLocaleString('en-US')} sensors, ${model.floors.length} floors, ${model.hives.length} hives; median of ${runs}`);
  console.log(`  JSON.stringify of the registry (baseline)   ${med(b).toFixed(0).padStart(6)} ms  1.00`);
  console.log(`  GraphQL query through Fastify + mercurius   ${med(q).toFixed(0).padStart(6)} ms  ratio ${(med(q) / med(b)).toFixed(2)}`);
  await app.close();
}
