import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { hits, parseWebhookFaults } from '../../src/webhooks/faults.js';

/**
 * Delivery faults on purpose, end to end over loopback HTTP (issue 29 item 1): the quickstart
 * delivers three event types to an endpoint that records every request on the wire — the
 * complete ones with their `webhook-id` and `occusim-sequence`, and the ones cut mid-body.
 * Two runs of the same seed, one with the platform in the run's thread and one in its own,
 * must hit the same events with each fault, and count the same numbers in their reports.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Wire {
  url: string;
  /** Complete requests in arrival order. */
  arrived: Array<{ id: string; seq: number }>;
  /** webhook-ids of requests whose connection dropped before the body was complete. */
  cut: string[];
}

async function recordingEndpoint(): Promise<Wire> {
  const wire: Omit<Wire, 'url'> = { arrived: [], cut: [] };
  const server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    let complete = false;
    req.on('data', () => undefined);
    req.on('end', () => {
      complete = true;
      wire.arrived.push({ id, seq: Number(req.headers['occusim-sequence']) });
      res.statusCode = 204;
      res.end();
    });
    req.on('close', () => {
      if (!complete) wire.cut.push(id);
    });
    req.on('error', () => undefined);
  });
  server.keepAliveTimeout = 60_000;
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, ...wire };
}

function quickstart(): ScenarioModel {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

const FAULTS = parseWebhookFaults(
  'duplicate=0.05,reorder=0.1/4,revise=0.3,timeout=0.02,delay=0.01/1-20,burst=0.01/4/50',
);

async function faultyRun(platformThread: boolean) {
  if (!FAULTS.ok) throw new Error(FAULTS.message);
  const dir = mkdtempSync(join(tmpdir(), 'occusim-faults-'));
  dirs.push(dir);
  const wire = await recordingEndpoint();
  const model = quickstart();
  const report = await runScenario(model, {
    durationMs: 15 * 60_000,
    platformThread,
    hiveThreads: 0,
    dbPath: join(dir, 'store.sqlite'),
    keepStore: false,
    webhooks: {
      allow: ['127.0.0.1/8'],
      faults: FAULTS.faults,
      declared: [
        {
          orgId: model.org.id,
          input: {
            name: 'faulty',
            eventTypes: ['ROOM_OCCUPANCY_1M', 'ROOM_OCCUPANCY', 'TRAFFIC'],
            url: wire.url,
            secret: SECRET,
          },
        },
      ],
    },
  });
  const times = new Map<string, number>();
  for (const a of wire.arrived) times.set(a.id, (times.get(a.id) ?? 0) + 1);
  let highest = -Infinity;
  const late: string[] = [];
  for (const a of wire.arrived) {
    if (a.seq < highest) late.push(a.id);
    highest = Math.max(highest, a.seq);
  }
  return {
    report,
    duplicated: [...times]
      .filter(([, n]) => n > 1)
      .map(([id]) => id)
      .sort(),
    // Injected earlier revisions: a sequence between two outbox rows.
    revisions: [...new Set(wire.arrived.filter((a) => !Number.isInteger(a.seq)).map((a) => a.id))].sort(),
    cut: [...wire.cut].sort(),
    // Arrived after a request of a later sequence: reordered (or held by a delay or a burst).
    late: [...new Set(late)].sort(),
  };
}

describe('delivery faults', () => {
  it('hit the same events in two runs of the same seed, whatever the thread layout, and the reports count them', async () => {
    const a = await faultyRun(false);
    const b = await faultyRun(true);
    const sub = a.report.result.webhooks?.[0];
    expect(sub?.faults).toBeDefined();
    expect(b.report.result.webhooks?.[0]?.faults).toEqual(sub?.faults);
    // Every kind was applied, and lost nothing: what the platform has it delivered.
    for (const k of ['duplicate', 'reorder', 'revise', 'timeout', 'delay', 'burst'] as const)
      expect(sub?.faults?.[k], k).toBeGreaterThan(0);
    expect(sub?.pending).toBe(0);
    expect(sub?.deadLettered).toBe(0);
    // The same events, seen on the wire.
    expect(a.duplicated.length).toBeGreaterThan(0);
    expect(b.duplicated).toEqual(a.duplicated);
    expect(a.revisions.length).toBe(sub?.faults?.revise);
    expect(b.revisions).toEqual(a.revisions);
    expect(a.cut.length).toBe(sub?.faults?.timeout);
    expect(b.cut).toEqual(a.cut);
    expect(a.late.length).toBeGreaterThan(0);
    // Held by a delay or a burst: the events are the same, their arrival depends on wall time
    // (a burst's hold may end before the next request goes). Everything else arrives late alike.
    const subId = sub?.id ?? '';
    const seeded = (xs: string[]) =>
      xs.filter((id) => !hits(7, subId, id, 'delay', 0.01) && !hits(7, subId, id, 'burst', 0.01));
    expect(seeded(b.late)).toEqual(seeded(a.late));
    console.log(
      `faults applied: ${JSON.stringify(sub?.faults)}; wire: ${a.duplicated.length} duplicated, ${a.revisions.length} earlier revisions, ${a.cut.length} cut, ${a.late.length} late`,
    );
  }, 180_000);
});
