import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { formatSummary } from '../../src/cli/summary.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { EVENT_TYPES } from '../../src/webhooks/event-types.js';
import { startReceiver, type Receiver } from '../../src/webhooks/receiver.js';
import { linesPerType } from './per-subscription.js';

/**
 * End to end over real HTTP on loopback: quickstart (shortened) with a subscription for every
 * event type, delivered by the run's platform into `occusim receive`'s receiver.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const dirs: string[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function quickstart(): ScenarioModel {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

async function runWithReceiver(
  failRate = 0,
  platformThread = false,
  paced: { speed: number; durationMs: number } | null = null,
) {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-e2e-'));
  dirs.push(dir);
  const out = join(dir, 'events.ndjson');
  const receiver = await startReceiver({ port: 0, secrets: [SECRET], out, failRate, seed: 3 });
  receivers.push(receiver);
  const model = quickstart();
  const report = await runScenario(model, {
    durationMs: paced?.durationMs ?? 20 * 60_000,
    ...(paced ? { speed: paced.speed } : {}),
    platformThread,
    dbPath: join(dir, 'store.sqlite'),
    webhooks: {
      allow: ['127.0.0.1/8'],
      declared: EVENT_TYPES.map((t) => ({
        orgId: model.org.id,
        input: { name: t.toLowerCase(), eventTypes: [t], url: receiver.url, secret: SECRET },
      })),
    },
  });
  await receiver.close();
  receivers.splice(receivers.indexOf(receiver), 1);
  return { report, receiver, ndjson: readFileSync(out, 'utf8'), dbPath: report.db };
}

describe('webhooks end to end over loopback HTTP', () => {
  it('delivers every event the pipeline produced, per type, signed, with spec §6 metadata', async () => {
    const { report, receiver, ndjson, dbPath } = await runWithReceiver();
    const store = new SqliteStore(dbPath);
    const occupancy: Record<string, number> = {};
    for (const e of store.events()) occupancy[e.type] = (occupancy[e.type] ?? 0) + 1;
    store.close();
    const got = receiver.stats();
    expect(got.badSignatures).toBe(0);
    expect(got.duplicates).toBe(0);
    for (const [type, n] of Object.entries(occupancy)) expect(got.byType[type], type).toBe(n);
    expect((got.byType.DETECTIONS ?? 0) + (got.byType.TRAFFIC ?? 0)).toBe(report.result.messages.packetsDelivered);
    expect(got.byType.DETECTIONS).toBeGreaterThan(0);
    expect(got.byType.TRAFFIC).toBeGreaterThan(0);
    expect(report.result.webhooks?.every((s) => s.pending === 0 && s.deadLettered === 0)).toBe(true);
    // Fleet-scale question on a small run: did delivery keep up with real time, by how much.
    const k = report.perf.webhookKeepUp;
    expect(k?.enqueued).toBe(got.unique);
    expect(k?.delivered).toBe(got.unique);
    expect(k?.backlog).toBe(0);
    expect(k?.producedPerSimS).toBeCloseTo(got.unique / (20 * 60), 1);
    expect(k?.keptUp).toBe(true);
    expect(k?.headroom).toBeGreaterThan(1);
    expect(k?.sensingToDeliveredSimMs.p99).toBeGreaterThan(0);
    expect(k?.sensingToDeliveredWallMs).toBeUndefined();
    expect(formatSummary(report)).toMatch(
      /delivery kept up with real time \(capacity ≥ [\d,]+\/wall-s, ×[\d.]+ the need, backlog 0\); produced [\d.]+\/sim-s, delivered [\d.]+\/sim-s/,
    );
    const bodies = ndjson
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; metadata: Record<string, string> });
    const keysOf = (type: string): string[] => Object.keys(bodies.find((b) => b.type === type)?.metadata ?? {}).sort();
    const location = [
      'building_id',
      'building_name',
      'floor_id',
      'floor_name',
      'org_id',
      'org_name',
      'site_id',
      'site_name',
    ];
    expect(keysOf('FLOOR_OCCUPANCY')).toEqual(location);
    expect(keysOf('ROOM_OCCUPANCY_1M')).toEqual([...location, 'room_id', 'room_name'].sort());
    expect(keysOf('ZONE_OCCUPANCY')).toEqual(expect.arrayContaining([...location, 'zone_id', 'zone_name']));
    expect(keysOf('TRAFFIC')).toEqual(
      expect.arrayContaining([
        ...location,
        'hive_id',
        'hive_serial',
        'hive_model',
        'hive_version',
        'sensor_id',
        'mac_address',
        'sensor_mode',
        'sensor_model',
      ]),
    );
    expect(bodies.find((b) => b.type === 'DETECTIONS')?.metadata.sensor_mode).toBe('presence');
    expect(bodies.find((b) => b.type === 'TRAFFIC')?.metadata.sensor_id).not.toMatch(/^sensor_/);
  }, 120_000);

  it('states for a paced run whether delivery kept up, with sensing → delivered in wall time', async () => {
    const { report, receiver } = await runWithReceiver(0, false, { speed: 600, durationMs: 10 * 60_000 });
    const k = report.perf.webhookKeepUp;
    expect(k?.delivered).toBe(receiver.stats().unique);
    expect(k?.keptUp).toBe(true);
    expect(k?.speed).toBe(600);
    // ×600: a minute's batching is 100 ms of wall time; delivery adds milliseconds.
    expect(k?.sensingToDeliveredWallMs?.p99).toBeGreaterThan(0);
    expect(k?.sensingToDeliveredWallMs?.p99).toBeLessThan(10_000);
    expect(formatSummary(report)).toMatch(
      /delivery kept up with real time ×600 \(backlog 0, enqueue → 2xx p99 [\d.]+ ms of ≤ 2000 ms; /,
    );
    expect(formatSummary(report)).toMatch(
      /sensing → delivered \(sim\) p50 \d+ ms, p99 \d+ ms, max \d+ ms; wall ≤ p50 [\d.]+ ms, p99 [\d.]+ ms/,
    );
  }, 120_000);

  it('send_on_value_change: a run stopped and resumed on its store resends no unchanged value (what the uninterrupted run sends)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-resume-'));
    dirs.push(dir);
    const model = quickstart();
    const types = ['ROOM_OCCUPANCY_1MIN', 'FLOOR_OCCUPANCY', 'DETECTIONS'] as const;
    // One receiver per store: each store's deliveries counted apart.
    const whole = await startReceiver({ port: 0, secrets: [SECRET], out: join(dir, 'whole.ndjson') });
    const parts = await startReceiver({ port: 0, secrets: [SECRET], out: join(dir, 'parts.ndjson') });
    receivers.push(whole, parts);
    const run = async (receiver: Receiver, dbPath: string, durationMs: number, resume: boolean): Promise<void> => {
      await runScenario(model, {
        durationMs,
        dbPath,
        ...(resume ? { storePolicy: 'resume' as const } : {}),
        webhooks: {
          allow: ['127.0.0.1/8'],
          declared: types.map((t) => ({
            orgId: model.org.id,
            input: {
              name: t.toLowerCase(),
              eventTypes: [t],
              url: receiver.url,
              secret: SECRET,
              sendOnValueChange: true,
            },
          })),
        },
      });
    };
    await run(whole, join(dir, 'whole.sqlite'), 20 * 60_000, false);
    await run(parts, join(dir, 'parts.sqlite'), 10 * 60_000, false);
    await run(parts, join(dir, 'parts.sqlite'), 20 * 60_000, true);
    await whole.close();
    await parts.close();
    receivers.splice(0);
    expect(parts.stats().duplicates).toBe(0);
    const bodies = (f: string) =>
      readFileSync(join(dir, f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; timestamp: number });
    const uninterrupted = bodies('whole.ndjson');
    const resumed = bodies('parts.ndjson');
    expect(uninterrupted.length).toBeGreaterThan(100);
    // Nothing the uninterrupted run did not send: without the stored last values the resumed
    // run sent each subject's first value again (an unchanged value).
    const sent = new Set(uninterrupted.map((b) => b.id));
    expect(resumed.filter((b) => !sent.has(b.id))).toEqual([]);
    // And nothing missing, the seconds after the stop included: the resumed store forgot the
    // first run's end-of-run drain and took the resumed run's batches of those seqs.
    const got = new Set(resumed.map((b) => b.id));
    expect(uninterrupted.filter((b) => !got.has(b.id))).toEqual([]);
  }, 240_000);

  it('a resumed run whose file moved the receiver to a new port delivers there, same subscription, nothing pending', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-moved-'));
    dirs.push(dir);
    const model = quickstart();
    const dbPath = join(dir, 'store.sqlite');
    const first = await startReceiver({ port: 0, secrets: [SECRET], out: null });
    const second = await startReceiver({ port: 0, secrets: [SECRET], out: null });
    receivers.push(first, second);
    const run = (receiver: Receiver, durationMs: number, resume: boolean) =>
      runScenario(model, {
        durationMs,
        dbPath,
        ...(resume ? { storePolicy: 'resume' as const } : {}),
        webhooks: {
          allow: ['127.0.0.1/8'],
          declared: [
            {
              orgId: model.org.id,
              input: { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY_1MIN'], url: receiver.url, secret: SECRET },
            },
          ],
        },
      });
    const a = await run(first, 10 * 60_000, false);
    await first.close();
    const b = await run(second, 20 * 60_000, true);
    expect(first.stats().unique).toBeGreaterThan(0);
    // Before: the stored URL (the first receiver, now closed) was kept and every delivery of the resumed run waited for retries.
    expect(second.stats().unique).toBeGreaterThan(0);
    expect(second.stats().badSignatures).toBe(0);
    expect(a.result.webhooks?.map((w) => w.id)).toEqual(b.result.webhooks?.map((w) => w.id));
    expect(b.result.webhooks?.[0]).toMatchObject({ retried: 0, deadLettered: 0, pending: 0 });
  }, 120_000);

  it('gives each subscription byte-identical NDJSON for the same seed twice, also when 20 % of attempts fail and the platform runs in its own thread', async () => {
    const a = await runWithReceiver(0.2);
    const b = await runWithReceiver(0.2, true);
    expect(b.report.perf.platformThread).toBe(true);
    expect(a.receiver.stats().failed).toBeGreaterThan(0);
    expect(a.ndjson.length).toBeGreaterThan(1000);
    // Each subscription's sequence, byte for byte (their interleaving at the shared receiver is the wall clock's).
    expect(linesPerType(b.ndjson)).toEqual(linesPerType(a.ndjson));
    expect(b.ndjson.length).toBe(a.ndjson.length);
    expect(a.report.result.webhooks).toEqual(b.report.result.webhooks);
  }, 240_000);
});
