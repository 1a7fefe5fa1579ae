import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { schedule } from '../support/schedule.js';

/**
 * The `webhook_down` fault of the run's schedule (issue 30): the named webhook's endpoint
 * refuses connections over the window, timed by the platform's clock. Over loopback HTTP with
 * simulated `webhook-timestamp`s: nothing reaches the endpoint inside the window, the refused
 * attempts are counted and retried, and once it is up again the endpoint receives every event
 * a run without the fault delivers.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
});

async function recordingEndpoint(): Promise<{ url: string; arrived: Array<{ id: string; timestampS: number }> }> {
  const arrived: Array<{ id: string; timestampS: number }> = [];
  const server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      arrived.push({ id: String(req.headers['webhook-id']), timestampS: Number(req.headers['webhook-timestamp']) });
      res.statusCode = 204;
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, arrived };
}

function quickstart(): ScenarioModel {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

async function run(faults: string) {
  const endpoint = await recordingEndpoint();
  const model = quickstart();
  const report = await runScenario(model, {
    durationMs: 12 * 60_000,
    keepStore: false,
    faults: schedule(faults),
    webhooks: {
      allow: ['127.0.0.1/8'],
      timestamps: 'simulated',
      declared: [
        {
          orgId: model.org.id,
          input: { name: 'consumer', eventTypes: ['ROOM_OCCUPANCY_1M', 'TRAFFIC'], url: endpoint.url, secret: SECRET },
        },
      ],
    },
  });
  return { report, arrived: endpoint.arrived, startS: model.startMs / 1000 };
}

describe('webhook_down fault', () => {
  it('refuses every attempt inside the window, retries them after it, and delivers what a run without it delivers', async () => {
    const down = await run('webhook_down@4m+3m:webhook=consumer');
    const clean = await run('');
    const sub = down.report.result.webhooks?.[0];
    expect(sub?.faults?.down).toBeGreaterThan(0);
    expect(sub?.pending).toBe(0);
    expect(sub?.deadLettered).toBe(0);
    const inWindow = down.arrived.filter((a) => a.timestampS >= down.startS + 240 && a.timestampS < down.startS + 420);
    expect(inWindow).toEqual([]);
    expect(clean.arrived.some((a) => a.timestampS >= clean.startS + 240 && a.timestampS < clean.startS + 420)).toBe(
      true,
    );
    // Every event the fault-free run delivered arrives, once the endpoint is up again.
    expect(new Set(down.arrived.map((a) => a.id))).toEqual(new Set(clean.arrived.map((a) => a.id)));
    expect(clean.report.result.webhooks?.[0]?.faults).toBeUndefined();
  }, 120_000);

  it('is refused naming a webhook the run does not have, and needs a duration', async () => {
    await expect(run('webhook_down@1m+1m:webhook=nobody')).rejects.toThrow(
      /fault webhook_down.*no webhook named "nobody" \(the run's webhooks: "consumer"\)/,
    );
    await expect(run('webhook_down@1m')).rejects.toThrow(/webhook_down needs a duration > 0/);
  });
});
