/**
 * `npm run bench -- distributed [duration]`: office-day (three floors, one hive each) run once
 * by one process, then as 2 simulator shards (`run --shard i/2 --external-ingest`) → a Debian
 * mosquitto → 2 `occusim serve --share-group --partition j/2 --shards 2` ingest processes → one
 * PostgreSQL (docs/scale-out.md). Every process is the CLI in a child process, as users run it.
 * Prints each side's wall time, the ingest processes' tallies and whether the stored per-minute
 * presence, traffic and batches equal the single process's (canonical order). The broker and the
 * database are started as the tests start them (test/broker/mosquitto.ts, test/support/postgres.ts).
 * Duration: simulated, default 2h.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startMosquitto } from '../test/broker/mosquitto.js';
import { startPostgres } from '../test/support/postgres.js';

interface Child {
  out: () => string;
  until(re: RegExp): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
  kill(): void;
}

function cli(root: string, args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    out: () => out,
    exited,
    kill: () => void child.kill('SIGTERM'),
    async until(re) {
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode}: ${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

async function rows(url: string, sql: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return JSON.stringify((await c.query({ text: sql, rowMode: 'array' })).rows);
  } finally {
    await c.end();
  }
}

const TABLES = {
  presence:
    'SELECT space_id, minute_ms::text, value, samples FROM presence_minute ORDER BY space_id COLLATE "C", minute_ms',
  traffic:
    'SELECT sensor_id, minute_ms::text, in_count, out_count FROM traffic_minute ORDER BY sensor_id COLLATE "C", minute_ms',
  batches: 'SELECT hive_serial, seq::text, packet_count FROM batches ORDER BY hive_serial COLLATE "C", seq',
};

export async function runDistributedBench(root: string, durationText = '2h'): Promise<void> {
  const scenario = join(root, 'scenarios/office-day.yaml');
  const broker = await startMosquitto();
  const postgres = await startPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-distributed-'));
  try {
    const [single, shared] = [await postgres.createDatabase(), await postgres.createDatabase()];
    const common = [
      scenario,
      '--duration',
      durationText,
      '--broker',
      broker.url,
      '--quiet',
      '--platform-thread',
      'off',
    ];
    let t0 = performance.now();
    const one = cli(root, ['run', ...common, '--store', single]);
    if ((await one.exited) !== 0) throw new Error(`single run failed: ${one.out()}`);
    const singleMs = performance.now() - t0;

    const ingests = [1, 2].map((j) =>
      cli(root, [
        'serve',
        '--scenario',
        scenario,
        '--store',
        shared,
        '--broker',
        broker.url,
        '--share-group',
        'bench',
        '--partition',
        `${j}/2`,
        '--shards',
        '2',
        '--port',
        '0',
      ]),
    );
    await Promise.all(ingests.map((i) => i.until(/following 2 shard clock/)));
    t0 = performance.now();
    const shards = [1, 2].map((i) =>
      cli(root, ['run', ...common, '--shard', `${i}/2`, '--external-ingest', '--report', join(dir, `s${i}.json`)]),
    );
    const codes = await Promise.all(shards.map((s) => s.exited));
    const tallies = (
      await Promise.all(ingests.map((i) => i.until(/shards done; every minute finalised: (\{.*\})/)))
    ).map((m) => JSON.parse(m[1] as string) as Record<string, number>);
    const distributedMs = performance.now() - t0;
    for (const i of ingests) i.kill();
    await Promise.all(ingests.map((i) => i.exited));
    if (codes.some((c) => c !== 0)) throw new Error(`a shard failed: ${codes.join(', ')}`);

    const merged = cli(root, ['report', 'merge', join(dir, 's1.json'), join(dir, 's2.json'), '--json']);
    await merged.exited;
    const ledger = (
      JSON.parse(merged.out()) as { ledger: { packets: Record<string, number>; batches: Record<string, number> } }
    ).ledger;
    console.log(
      `\n## distributed — office-day ${durationText}: 2 shards → mosquitto → 2 ingest processes → PostgreSQL\n`,
    );
    console.log(`single process (run on the broker, one PostgreSQL):      ${(singleMs / 1000).toFixed(1)} s wall`);
    console.log(
      `2 shards + 2 ingest processes (from the shards' start):  ${(distributedMs / 1000).toFixed(1)} s wall (×${(singleMs / distributedMs).toFixed(2)})`,
    );
    for (const [j, t] of tallies.entries())
      console.log(
        `ingest ${j + 1}/2: ${t.batchesProcessed} batches, ${t.packetsProcessed} packets, ${t.duplicateBatches} duplicates, ${t.deadLettered} dead-lettered`,
      );
    console.log(`merged ledger: packets ${JSON.stringify(ledger.packets)}, batches ${JSON.stringify(ledger.batches)}`);
    for (const [name, sql] of Object.entries(TABLES)) {
      const [a, b] = [await rows(single, sql), await rows(shared, sql)];
      console.log(
        `${name}: ${(JSON.parse(a) as unknown[]).length} rows, ${a === b ? 'identical to the single process' : 'DIFFERENT from the single process'}`,
      );
    }
    console.log(`load average: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    await postgres.stop();
    broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
