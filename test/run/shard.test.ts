import fc from 'fast-check';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { loadScenarioObject } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { mergeReports } from '../../src/run/report-merge.js';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { parseShard, shardModel, shardSerials } from '../../src/run/shard.js';
import { startMosquitto } from '../broker/mosquitto.js';
import { describeWithBinaries } from '../support/external-binaries.js';
import { threeHiveScenario } from './fixtures/three-hives.js';

function model(): ScenarioModel {
  const r = loadScenarioObject(threeHiveScenario(), '<three hives>');
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.model;
}

describe('shard selection', () => {
  it('reads i/n and refuses slices that do not exist, in one line', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    expect(parseShard('2')).toBeNull();
    expect(parseShard('a/b')).toBeNull();
    const m = model();
    for (const [i, n, text] of [
      [0, 2, 'want i/n with 1 ≤ i ≤ n'],
      [3, 2, 'want i/n with 1 ≤ i ≤ n'],
      [1, 4, 'the scenario has 3 hive(s), so at most 3 shards'],
    ] as const) {
      let err: unknown = null;
      try {
        shardSerials(m, { index: i, count: n });
      } catch (e) {
        err = e;
      }
      expect(isAppError(err, 'USAGE')).toBe(true);
      expect((err as Error).message).toBe(`--shard ${i}/${n}: ${text}`);
    }
  });

  it('deals every hive to exactly one shard, whatever the order of the hives (fast-check seed 14)', () => {
    const m = model();
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.shuffledSubarray(m.hives, { minLength: 3, maxLength: 3 }),
        (n, hives) => {
          const shuffled = { ...m, hives };
          const slices = Array.from({ length: n }, (_, k) => shardSerials(shuffled, { index: k + 1, count: n }));
          expect(slices.flat().sort()).toEqual(m.hives.map((h) => h.serial).sort());
          expect(new Set(slices.flat()).size).toBe(m.hives.length);
          for (let k = 0; k < n; k++) expect(slices[k]).toEqual(shardSerials(m, { index: k + 1, count: n }));
        },
      ),
      { seed: 14, numRuns: 30 },
    );
  });

  it("keeps the world whole and only the slice's hives and their sensors", () => {
    const m = model();
    const { model: s, info } = shardModel(m, { index: 2, count: 2 });
    expect(info.hives).toHaveLength(1);
    expect(s.hives.map((h) => h.serial)).toEqual(info.hives);
    expect(s.sensors.every((x) => s.hives.some((h) => h.id === x.hiveId))).toBe(true);
    expect(s.populations).toBe(m.populations);
    expect(s.rooms).toBe(m.rooms);
  });
});

/** Every uplink the broker carries, as `topic payload-hex` lines. */
async function captureUplinks(url: string): Promise<{ lines: string[]; stop(): Promise<void> }> {
  const sub = await connectAsync(url, { clientId: `shard-watch-${Math.random().toString(36).slice(2)}`, clean: true });
  const lines: string[] = [];
  sub.on('message', (topic, payload) => lines.push(`${topic} ${payload.toString('hex')}`));
  await sub.subscribeAsync('occusim/v1/hives/+/uplink', { qos: 1 });
  return { lines, stop: () => sub.endAsync() };
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 300));

describeWithBinaries(['mosquitto'], 'shards on one external broker (Debian mosquitto)', () => {
  let mosquitto: Awaited<ReturnType<typeof startMosquitto>>;
  let whole: RunReport;
  let shards: RunReport[];
  let wholeLines: string[];
  let shardLines: string[];
  beforeAll(async () => {
    mosquitto = await startMosquitto();
    const opts = { brokerUrl: mosquitto.url, platformThread: false, keepStore: false } as const;
    const a = await captureUplinks(mosquitto.url);
    whole = await runScenario(threeHiveScenario(), opts);
    await settle();
    await a.stop();
    wholeLines = a.lines;
    // Both shards at once, as on two machines: each platform ingests only its own hives
    // (shard 2's from its own thread, so the option crosses to the worker too).
    const b = await captureUplinks(mosquitto.url);
    shards = await Promise.all(
      [1, 2].map((index) =>
        runScenario(threeHiveScenario(), { ...opts, platformThread: index === 2, shard: { index, count: 2 } }),
      ),
    );
    await settle();
    await b.stop();
    shardLines = b.lines;
  }, 600_000);
  afterAll(() => mosquitto?.stop());

  it("publishes, across the shards, exactly the unsharded run's uplinks; no message from two shards", () => {
    expect(wholeLines.length).toBeGreaterThan(100);
    const bySerial = (s: string): number => shards.findIndex((r) => r.shard?.hives.includes(s.split('/')[3] ?? ''));
    // Each message from exactly one shard's hives, and the shards' union equal to the whole run's.
    expect(shardLines.every((l) => bySerial(l) >= 0)).toBe(true);
    expect([...shardLines].sort()).toEqual([...wholeLines].sort());
    for (const r of shards) expect(r.result.messages.lost).toBe(0);
    expect(shards.map((r) => r.perf.platformThread)).toEqual([false, true]);
    // Had a shard's platform ingested the other's hives, it would have dead-lettered them (unknown hive).
    for (const r of [whole, ...shards]) expect(r.result.messages.deadLettered).toBe(0);
    expect(shards.map((r) => r.shard?.hives.length)).toEqual([2, 1]);
  });

  it("merges the shards' reports into the whole run's ledger and traffic counts", () => {
    const merged = mergeReports(shards, ['a.json', 'b.json']);
    const w = whole.result;
    expect(merged.ledger.packets).toEqual({
      sent: w.messages.packetsSent,
      stored: w.messages.packetsDelivered,
      deadLettered: w.messages.deadLettered,
      lost: 0,
    });
    expect(merged.ledger.batches).toEqual({
      sent: w.messages.batchesSent,
      stored: w.messages.batchesProcessed,
      duplicates: w.messages.duplicateBatches,
    });
    const byId = <T extends { id: string }>(xs: readonly T[]): T[] => [...xs].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(byId(merged.traffic.sensors)).toEqual(byId(w.traffic.sensors));
    expect(merged.traffic.overall).toEqual(w.traffic.overall);
    // Rooms measured by one shard only are the whole run's figures; the floor is split here.
    for (const s of merged.presence.spaces) expect(s).toEqual(w.presence.spaces.find((x) => x.id === s.id));
    expect(merged.presence.spaces.filter((s) => s.kind === 'room').length).toBeGreaterThan(0);
    expect(merged.delivery?.hives.map((h) => h.hive).sort()).toEqual(w.delivery?.hives.map((h) => h.hive).sort());
    expect(merged.delivery?.overall.generated).toBe(w.delivery?.overall.generated);
    // The merge does not depend on the order the files are given in.
    expect(mergeReports([...shards].reverse(), ['b.json', 'a.json'])).toEqual(merged);
  });

  it('refuses reports that do not make one run, in one line', () => {
    const [a, b] = shards as [RunReport, RunReport];
    const refusal = (reports: RunReport[]): string => {
      try {
        mergeReports(
          reports,
          reports.map((_, i) => `r${i}.json`),
        );
        return 'merged';
      } catch (err) {
        expect(isAppError(err, 'USAGE')).toBe(true);
        return (err as Error).message;
      }
    };
    expect(refusal([a])).toBe('report merge: shard 2/2 missing');
    expect(refusal([a, a])).toBe('report merge: r1.json and r0.json are both shard 1/2');
    expect(refusal([a, { ...b, seed: 8 }])).toBe(
      'report merge: r1.json is of quickstart-3-hives seed 8, r0.json of quickstart-3-hives seed 7',
    );
    expect(refusal([a, { ...b, shard: { ...b.shard!, count: 3 } }])).toMatch(/different shard counts$/);
    expect(refusal([a, whole])).toBe("report merge: r1.json is not a shard's report (no shard: run with --shard i/n)");
    expect(refusal([])).toBe('report merge: no reports given');
  });
});
