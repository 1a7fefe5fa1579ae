import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { parseWebhookStorm } from '../../src/webhooks/storm.js';
import {
  ConsumerState,
  SEQUENCE_HEADER,
  type ApplyMode,
  type StateEvent,
  type StateRow,
} from '../../src/webhooks/consumer-state.js';
import { compareStates, passed } from '../../src/webhooks/consumer-verify.js';
import { startTestReceiver, type TestReceiver } from './receiver-fixture.js';

/**
 * Event storms end to end (issue 29 item 3): the quickstart with a storm on one subscription
 * (`--webhook-storm`), delivered over loopback HTTP to an endpoint that records every request.
 * Two runs of the same seed, one with the platform in the run's thread and one in its own, must
 * put the same storm events (ids and bodies) on the wire, count them alike in their reports,
 * and give the same expected consumer state. Storm requests go through the delivery faults like
 * any other (5% duplicated): a correct consumer of what arrived passes `consumer-verify`, a
 * naive one (duplicates counted twice) fails.
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
  let consumer: readonly StateRow[] = [];
  const report = await runScenario(model, {
    durationMs: 5 * 60_000,
    platformThread,
    hiveThreads: 0,
    dbPath: join(dir, 'store.sqlite'),
    keepStore: false,
    webhooks: {
      allow: ['127.0.0.1/8'],
      storm: STORM.storm,
      faults: { duplicate: { rate: 0.05 } },
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
  const storm = new Map<string, string>();
  for (const r of receiver.received)
    if (String(r.headers['webhook-id']).startsWith('event_storm_')) storm.set(String(r.headers['webhook-id']), r.body);
  const digest = createHash('sha256');
  for (const body of [...storm.values()].sort()) digest.update(body);
  /** The state a consumer of `mode` holds from what arrived, in arrival order. */
  const held = (mode: ApplyMode): StateRow[] => {
    const state = new ConsumerState(mode);
    for (const r of receiver.received)
      state.apply(
        String(r.headers['webhook-id']),
        Number(r.headers[SEQUENCE_HEADER]),
        JSON.parse(r.body) as StateEvent,
      );
    return state.rows();
  };
  return {
    report,
    storm: storm.size,
    duplicates: receiver.received.length - new Set(receiver.received.map((r) => r.headers['webhook-id'])).size,
    bodies: digest.digest('hex'),
    consumer,
    idempotent: held('idempotent'),
    naive: held('naive'),
  };
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
    // Through the faults like real traffic: duplicated, and a correct consumer still converges.
    expect(sub?.faults?.duplicate).toBeGreaterThan(0);
    expect(a.duplicates).toBe(sub?.faults?.duplicate);
    expect(passed(compareStates(a.consumer, a.idempotent))).toBe(true);
    expect(passed(compareStates(a.consumer, a.naive))).toBe(false);
  }, 180_000);
});
