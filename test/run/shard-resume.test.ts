import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { isAppError } from '../../src/core/errors.js';
import { loadScenarioObject } from '../../src/scenario/load.js';
import { mergeReports } from '../../src/run/report-merge.js';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { startMosquitto } from '../broker/mosquitto.js';
import { describeWithBinaries } from '../support/external-binaries.js';
import { storedSeries } from '../support/stored-series.js';
import { threeHiveScenario } from './fixtures/three-hives.js';

/**
 * A sharded run stopped at t and resumed to 2t (docs/scale-out.md, Resuming): each shard
 * resumes its own store, and stores minute for minute what the same shard of an uninterrupted
 * run stores; the merged ledger balances. Combinations that cannot resume exactly are refused.
 */
const MIN = 60_000;
const dir = mkdtempSync(join(tmpdir(), 'occusim-shard-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function model() {
  const r = loadScenarioObject(threeHiveScenario(), '<three hives>');
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.model;
}

async function seriesOf(path: string): ReturnType<typeof storedSeries> {
  const store = sqliteStore(path);
  try {
    return await storedSeries(store, model());
  } finally {
    await store.close();
  }
}

async function refusal(run: Promise<unknown>): Promise<string> {
  try {
    await run;
    return 'ran';
  } catch (err) {
    expect(isAppError(err, 'USAGE')).toBe(true);
    return (err as Error).message;
  }
}

describe('resuming a shard run that cannot resume exactly', () => {
  it('refuses --resume with --external-ingest before anything starts', async () => {
    const text = await refusal(
      runScenario(threeHiveScenario('5m'), {
        brokerUrl: 'mqtt://127.0.0.1:1',
        shard: { index: 1, count: 2 },
        externalIngest: true,
        storePolicy: 'resume',
      }),
    );
    expect(text).toBe(
      '--resume with --external-ingest is not supported: run the whole sharded run again into a new database (serve --shards on an empty store)',
    );
  });
});

describeWithBinaries(['mosquitto'], 'a sharded run stopped at t and resumed to 2t (Debian mosquitto)', () => {
  let mosquitto: Awaited<ReturnType<typeof startMosquitto>>;
  const at = (name: string): string => join(dir, name);
  const shards = (durationMs: number, db: (i: number) => string, resume: boolean): Promise<RunReport[]> =>
    Promise.all(
      [1, 2].map((index) =>
        runScenario(threeHiveScenario(), {
          durationMs,
          brokerUrl: mosquitto.url,
          platformThread: index === 2,
          dbPath: db(index),
          shard: { index, count: 2 },
          ...(resume ? { storePolicy: 'resume' as const } : {}),
        }),
      ),
    );
  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });
  afterAll(() => mosquitto?.stop());

  it('stores, shard by shard, what the uninterrupted shards store; the merged ledger balances', async () => {
    const whole = await shards(10 * MIN, (i) => at(`whole-${i}.sqlite`), false);
    const first = await shards(5 * MIN, (i) => at(`parts-${i}.sqlite`), false);
    for (const r of first) expect(r.result.messages.lost).toBe(0);
    const resumed = await shards(10 * MIN, (i) => at(`parts-${i}.sqlite`), true);
    for (const i of [1, 2]) {
      const a = await seriesOf(at(`parts-${i}.sqlite`));
      expect(a.presence.length).toBeGreaterThan(20);
      expect(a).toEqual(await seriesOf(at(`whole-${i}.sqlite`)));
    }
    const m = mergeReports(resumed);
    const w = mergeReports(whole);
    expect(m.ledger.packets).toEqual({ ...w.ledger.packets, lost: 0 });
    // The first runs' batches (but their drains) come again as duplicates; every batch stored once.
    expect(m.ledger.batches.duplicates).toBeGreaterThan(0);
    expect(m.ledger.batches.stored + m.ledger.batches.duplicates).toBe(w.ledger.batches.stored);
    expect(m.presence.spaces).toEqual(w.presence.spaces);
    expect(m.traffic).toEqual(w.traffic);
  }, 300_000);

  it("refuses to resume one shard's store as another shard, or unsharded", async () => {
    const other = await refusal(
      runScenario(threeHiveScenario(), {
        durationMs: 10 * MIN,
        brokerUrl: mosquitto.url,
        platformThread: false,
        dbPath: at('parts-1.sqlite'),
        shard: { index: 2, count: 2 },
        storePolicy: 'resume',
      }),
    );
    expect(other).toMatch(/holds a different run/);
    const unsharded = await refusal(
      runScenario(threeHiveScenario(), {
        durationMs: 10 * MIN,
        brokerUrl: mosquitto.url,
        platformThread: false,
        dbPath: at('parts-1.sqlite'),
        storePolicy: 'resume',
      }),
    );
    expect(unsharded).toMatch(/holds a different run/);
  }, 60_000);
});
