import type { ChildProcess } from 'node:child_process';
import { startIngest, type IngestProcess } from './fixtures/ingest-process.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { cli } from '../cli/fixtures/run-cli.js';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mergeReports } from '../../src/run/report-merge.js';
import { runScenario, type RunReport } from '../../src/run/run-scenario.js';
import { startMosquitto } from '../broker/mosquitto.js';
import { describeWithBinaries } from '../support/external-binaries.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../support/postgres.js';
import { threeHiveScenario } from './fixtures/three-hives.js';

/**
 * The distributed run of issue 14 on one machine: 2 simulator shards (`run --shard i/2
 * --external-ingest`) → a real Debian mosquitto → 2 `occusim serve` ingest processes sharing the
 * uplinks through `$share/…`, each aggregating the floors of its partition → one PostgreSQL.
 * The stored per-minute series and traffic counts must equal the single-process run's (same
 * scenario on the same broker into another database), in canonical order; the merged ledger
 * loses nothing; a retransmitted batch is counted as a duplicate and stored once.
 */
/** With the meeting room's calibration points: the merge reads them from the scenario, as the ingest processes' catalogue holds them. */
const scenario = (): object => threeHiveScenario('20m', { calibrationPoints: true });
const pgSkip = postgresSkipReason();

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
}

async function rows(url: string, sql: string): Promise<unknown[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query({ text: sql, rowMode: 'array' })).rows;
  } finally {
    await c.end();
  }
}

const PRESENCE =
  'SELECT space_id, minute_ms::text, value, samples FROM presence_minute ORDER BY space_id COLLATE "C", minute_ms';
const TRAFFIC =
  'SELECT sensor_id, minute_ms::text, in_count, out_count FROM traffic_minute ORDER BY sensor_id COLLATE "C", minute_ms';
const BATCHES = 'SELECT hive_serial, seq::text, packet_count FROM batches ORDER BY hive_serial COLLATE "C", seq';

async function metric(api: string, name: string): Promise<number> {
  const text = await (await fetch(`${api}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return Number(m?.[1]);
}

describeWithBinaries(['mosquitto'], 'a distributed run: 2 shards → mosquitto → 2 ingest processes → PostgreSQL', () => {
  let mosquitto: Awaited<ReturnType<typeof startMosquitto>> | null = null;
  let postgres: TestPostgres | null = null;
  const ingests: IngestProcess[] = [];
  let dir = '';
  let scenarioFile = '';
  let whole: RunReport;
  let shards: RunReport[];
  let wholeDb = '';
  let sharedDb = '';
  let apis: string[] = [];
  let tallies: Array<{
    batchesProcessed: number;
    duplicateBatches: number;
    packetsProcessed: number;
    deadLettered: number;
  }>;

  beforeAll(async () => {
    if (pgSkip !== null) return;
    dir = mkdtempSync(join(tmpdir(), 'occusim-distributed-'));
    scenarioFile = join(dir, 'quickstart-3-hives.yaml');
    // YAML is a superset of JSON: the fixture as a file the serve processes can read.
    writeFileSync(scenarioFile, JSON.stringify(scenario()));
    mosquitto = await startMosquitto();
    postgres = await startPostgres();
    [wholeDb, sharedDb] = [await postgres.createDatabase(), await postgres.createDatabase()];
    // The reference: one process simulating and ingesting every hive, on the same broker.
    whole = await runScenario(scenario(), { brokerUrl: mosquitto.url, platformThread: false, dbPath: wholeDb });
    for (const j of [1, 2])
      ingests.push(
        startIngest([
          '--scenario',
          scenarioFile,
          '--store',
          sharedDb,
          '--broker',
          mosquitto.url,
          '--share-group',
          'occusim',
          '--partition',
          `${j}/2`,
          '--shards',
          '2',
          '--port',
          '0',
        ]),
      );
    apis = (await Promise.all(ingests.map((i) => i.until(/api listening on (http:\/\/\S+)/)))).map(
      (m) => m[1] as string,
    );
    await Promise.all(ingests.map((i) => i.until(/following 2 shard clock/)));
    shards = await Promise.all(
      [1, 2].map((index) =>
        runScenario(scenario(), {
          brokerUrl: mosquitto!.url,
          platformThread: false,
          keepStore: false,
          shard: { index, count: 2 },
          externalIngest: true,
        }),
      ),
    );
    tallies = (await Promise.all(ingests.map((i) => i.until(/shards done; every minute finalised: (\{.*\})/)))).map(
      (m) => JSON.parse(m[1] as string) as (typeof tallies)[number],
    );
  }, 240_000);

  afterAll(async () => {
    for (const i of ingests) await stop(i.child);
    await postgres?.stop();
    mosquitto?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(pgSkip !== null)(
    'stores per-minute presence and traffic identical to the single-process run, in canonical order',
    async () => {
      const presence = await rows(sharedDb, PRESENCE);
      expect(presence.length).toBeGreaterThan(50);
      expect(presence).toEqual(await rows(wholeDb, PRESENCE));
      const traffic = await rows(sharedDb, TRAFFIC);
      expect(traffic.length).toBeGreaterThan(10);
      expect(traffic).toEqual(await rows(wholeDb, TRAFFIC));
      expect(await rows(sharedDb, BATCHES)).toEqual(await rows(wholeDb, BATCHES));
    },
  );

  it.skipIf(pgSkip !== null)(
    'splits the batches over both ingest processes, and the merged ledger loses nothing',
    () => {
      // The shared subscription handed each process part of the uplinks (one floor, three hives: the floor's batches land on both).
      for (const t of tallies) expect(t.batchesProcessed).toBeGreaterThan(0);
      const w = whole.result.messages;
      expect(tallies.reduce((a, t) => a + t.batchesProcessed, 0)).toBe(w.batchesProcessed);
      expect(tallies.reduce((a, t) => a + t.packetsProcessed, 0)).toBe(w.packetsDelivered);
      const merged = mergeReports(shards, ['s1.json', 's2.json']);
      expect(merged.ledger.packets).toEqual({
        sent: w.packetsSent,
        stored: w.packetsDelivered,
        deadLettered: 0,
        lost: 0,
      });
      expect(merged.ledger.batches.sent).toBe(w.batchesSent);
    },
  );

  it.skipIf(pgSkip !== null)(
    "report merge --store: the whole run's ledger and its presence and traffic accuracy, read from the shared store",
    async () => {
      // The shards' own reports hold no occupancy (the ingest processes measured it).
      for (const r of shards) expect(r.result.presence.spaces).toEqual([]);
      const files = shards.map((r, i) => {
        const f = join(dir, `s${i + 1}.json`);
        writeFileSync(f, JSON.stringify(r));
        return f;
      });
      const r = await cli('report', 'merge', ...files, '--store', sharedDb, '--scenario', scenarioFile, '--json');
      expect(r.code, r.err).toBe(0);
      const merged = JSON.parse(r.out) as ReturnType<typeof mergeReports>;
      expect(merged.ledger.packets.lost).toBe(0);
      // Every space, the floor split over three hives included, as the single-process run measured it.
      expect(merged.presence.spaces.length).toBeGreaterThan(1);
      expect(merged.presence.spaces).toEqual(whole.result.presence.spaces);
      expect(merged.presence.rooms).toEqual(whole.result.presence.rooms);
      expect(merged.presence.splitSpaces).toEqual([]);
      expect(merged.traffic).toEqual(whole.result.traffic);
      // Traffic-based occupancy, raw and calibrated: the floor's calibration reads the floor's presence, from the sensors of all three hives.
      expect(whole.result.trafficOccupancy.spaces.length).toBeGreaterThanOrEqual(3);
      expect(merged.trafficOccupancy).toEqual(whole.result.trafficOccupancy);
      // The owners' outbox events: the events one process emits.
      expect(whole.result.pipeline.eventsEmitted).toBeGreaterThan(0);
      expect(merged.pipeline.eventsEmitted).toBe(whole.result.pipeline.eventsEmitted);
      // Sensing → stored percentiles of the whole run, from the store: the single-process run's.
      expect(merged.latencyMs).toEqual(whole.result.latencyMs);
      expect(merged.notMerged.map((n) => n.split(':')[0])).toEqual(['detector, webhooks and perf']);
      expect(merged.accuracyFrom).toEqual({ store: expect.stringMatching(/^postgres:\/\//) as unknown });
      const text = await cli('report', 'merge', ...files, '--store', sharedDb, '--scenario', scenarioFile);
      expect(text.out).toMatch(/presence: \d+ space\(s\) read from postgres:\/\//);
      expect(text.out).toMatch(/traffic occupancy: \d+ space\(s\), mean MAE raw/);
      expect(text.out).toContain(`events: ${whole.result.pipeline.eventsEmitted} occupancy event(s) emitted`);
      expect(text.out).toContain(
        `latency sensing → stored: p50 ${whole.result.latencyMs.p50} ms, p90 ${whole.result.latencyMs.p90} ms, p99 ${whole.result.latencyMs.p99} ms`,
      );
      // Without the store neither is merged, and both say so.
      const shardsOnly = mergeReports(shards, ['s1.json', 's2.json']);
      expect(shardsOnly.trafficOccupancy).toBeUndefined();
      expect(shardsOnly.pipeline.eventsEmitted).toBeUndefined();
      expect(shardsOnly.notMerged.map((n) => n.split(':')[0])).toEqual(
        expect.arrayContaining(['trafficOccupancy', 'pipeline.eventsEmitted', 'latencyMs p50/p90/p99']),
      );
      expect(shardsOnly.latencyMs.p99).toBeUndefined();
    },
  );

  it.skipIf(pgSkip !== null)(
    'stores each batch received at its send instant, as one process stamps it: the latency percentiles merge from the store',
    async () => {
      const q =
        'SELECT b.hive_serial, b.seq, b.received_at_ms - p.max_sensed_ms FROM batches b JOIN batch_payloads p USING (hive_serial, seq) ORDER BY b.hive_serial COLLATE "C", b.seq';
      const single = await rows(wholeDb, q);
      expect(single.length).toBeGreaterThan(100);
      // The ingest processes follow the slowest shard's clock; a batch's send instant is the shard's own (issue 32 item 3).
      expect(await rows(sharedDb, q)).toEqual(single);
    },
  );

  it.skipIf(pgSkip !== null)(
    'each process is ready and shows its partition lease on /metrics (issue 32 item 5)',
    async () => {
      const owned = await Promise.all(apis.map((a) => metric(a, 'occusim_partitions_owned')));
      // Two partitions, one each (each took its own at start).
      expect(owned).toEqual([1, 1]);
      for (const a of apis) {
        const ready = await fetch(`${a}/health/ready`);
        expect(ready.status).toBe(200);
        expect(((await ready.json()) as { ready: boolean }).ready).toBe(true);
        expect(await metric(a, 'occusim_ingest_batches_behind')).toBe(0);
        expect(await metric(a, 'occusim_fenced_writes_total')).toBe(0);
        const text = await (await fetch(`${a}/metrics`)).text();
        expect(text).toMatch(/^occusim_partition_lease_age_seconds\{partition="[12]\/2"\} \d/m);
      }
    },
  );

  it.skipIf(pgSkip !== null)(
    'refuses to follow new shards into a store whose sharded run it finished (no silent resume)',
    async () => {
      const again = startIngest([
        '--scenario',
        scenarioFile,
        '--store',
        sharedDb,
        '--broker',
        mosquitto!.url,
        '--share-group',
        'occusim',
        '--partition',
        '1/2',
        '--shards',
        '2',
        '--port',
        '0',
      ]);
      const exited = await again.until(/never/).then(
        () => '',
        (err: Error) => err.message,
      );
      expect(again.child.exitCode).toBe(2);
      expect(exited).toContain(
        'holds a sharded run this ingest process (partition 1/2) already finished: resuming runs of --external-ingest shards is not supported',
      );
    },
  );

  it.skipIf(pgSkip !== null)(
    'counts a retransmitted batch as a duplicate on whichever process gets it, and stores it once',
    async () => {
      const [serial, seq] = (
        await rows(sharedDb, 'SELECT hive_serial, seq FROM batch_payloads ORDER BY id LIMIT 1')
      )[0] as [string, number];
      const [payload] = (
        await rows(
          sharedDb,
          `SELECT b.payload FROM batch_payloads b WHERE b.hive_serial = '${serial}' AND b.seq = ${seq}`,
        )
      )[0] as [Buffer];
      const before = await Promise.all(apis.map((a) => metric(a, 'occusim_duplicate_batches_total')));
      // The hive's retransmission, as after a lost ack: both copies acked, one stored.
      const hive = await connectAsync(mosquitto!.url, { clientId: `retransmit-${serial}`, clean: true });
      await hive.subscribeAsync(`occusim/v1/hives/${serial}/ack`, { qos: 1 });
      const acked = new Promise<void>((r) => hive.once('message', () => r()));
      await hive.publishAsync(`occusim/v1/hives/${serial}/uplink`, payload, { qos: 1 });
      await acked;
      await hive.endAsync();
      const after = await Promise.all(apis.map((a) => metric(a, 'occusim_duplicate_batches_total')));
      expect(after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await rows(sharedDb, BATCHES)).toEqual(await rows(wholeDb, BATCHES));
    },
  );
});
