import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { parseWebhookStorm } from '../../src/webhooks/storm.js';
import { startTestReceiver, type TestReceiver } from './receiver-fixture.js';

/**
 * Event storms end to end (issue 29 item 3): the quickstart with a storm on one subscription
 * (`--webhook-storm`), delivered over loopback HTTP to an endpoint that records every request.
 * Two runs of the same seed, one with the platform in the run's thread and one in its own, must
 * put the same storm events (ids and bodies) on the wire, count them alike in their reports,
 * and give the same expected consumer state.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function quickstart(): ScenarioModel {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

const STORM = parseWebhookStorm('40/DETECTIONS+ROOM_OCCUPANCY_1M+TRAFFIC');

async function stormRun(platformThread: boolean) {
  if (!STORM.ok) throw new Error(STORM.message);
  const dir = mkdtempSync(join(tmpdir(), 'occusim-storm-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  const receiver: TestReceiver = await startTestReceiver();
  closers.push(() => receiver.close());
  const model = quickstart();
  let consumer: readonly unknown[] = [];
  const report = await runScenario(model, {
    durationMs: 5 * 60_000,
    platformThread,
    hiveThreads: 0,
    dbPath: join(dir, 'store.sqlite'),
    keepStore: false,
    webhooks: {
      allow: ['127.0.0.1/8'],
      storm: STORM.storm,
      consumerExpect: true,
      declared: [
        {
          orgId: model.org.id,
          input: {
            name: 'stormy',
            eventTypes: ['ROOM_OCCUPANCY_1M', 'DETECTIONS', 'TRAFFIC'],
            url: receiver.url,
            secret: SECRET,
          },
        },
      ],
    },
    onArtefacts: (a) => {
      consumer = a.consumer ?? [];
    },
  });
  const storm = receiver.received.filter((r) => String(r.headers['webhook-id']).startsWith('event_storm_'));
  const digest = createHash('sha256');
  for (const r of [...storm].sort((x, y) => (x.body < y.body ? -1 : 1))) digest.update(r.body);
  return { report, storm: storm.length, bodies: digest.digest('hex'), consumer };
}

describe('event storms', () => {
  it('put the same events on the wire in two runs of the seed, whatever the thread layout, and count them', async () => {
    const a = await stormRun(false);
    const b = await stormRun(true);
    const sub = a.report.result.webhooks?.[0];
    // 5 minutes at 40/s, up to the platform's last instant (the last minute's recompute after the end).
    expect(sub?.storm?.generated).toBeGreaterThanOrEqual(5 * 60 * 40);
    expect(sub?.storm).toEqual({ rate: 40, generated: a.storm, delivered: a.storm });
    expect(b.report.result.webhooks?.[0]?.storm).toEqual(sub?.storm);
    expect(b.bodies).toBe(a.bodies);
    expect(sub?.pending).toBe(0);
    expect(a.report.perf.webhooks?.[0]).toMatchObject({ name: 'stormy', errorRate: 0 });
    expect(a.report.perf.webhooks?.[0]?.deliveredPerWallS).toBeGreaterThan(0);
    // Storm events are in the expected state, the same in both runs.
    expect(a.consumer.length).toBeGreaterThan(0);
    expect(b.consumer).toEqual(a.consumer);
  }, 180_000);
});
