/**
 * `npm run bench -- distributed-scale [--sizes 200k,100k,50k,25k] [--duration 5m] [--shards 4]
 * [--ingests 2]` (issue 32 item 4): a sharded run at fleet scale on one machine. For each fleet
 * size, largest first, until one holds real time:
 *
 * 1. the single-process run of the fleet (`occusim run --speed 1 --fidelity model`, its
 *    embedded broker, a PostgreSQL store): the baseline, measured in the same bench run;
 * 2. the same fleet as `--shards` simulator shards (`run --shard i/N --external-ingest`) → a
 *    Debian mosquitto → `--ingests` `occusim serve --share-group --partition j/M` processes with
 *    partition leases → one PostgreSQL (docs/scale-out.md).
 *
 * Every program is a child process started as users start it (dist/, so `npm run build` first).
 * Printed per trial: each process's CPU (s) and peak RSS (from /proc: bench/proc-usage.ts;
 * PostgreSQL with its backends), the shards' tick lag p99, the whole run's sensing → stored p99
 * (`report merge --store`: every stored packet's own figure), PostgreSQL's write rate
 * (pg_stat_database: transactions and rows written per wall second), and the ratio of the
 * distributed run's total CPU to the single process's (both with their PostgreSQL). A run holds
 * real time when every shard's lag p99 < 2 s, nothing is lost, and the ingest processes have
 * finalised every minute within 60 s of the last shard's end. A run that falls more than
 * STOP_LAG_MS behind is stopped (SIGINT: it still writes its report) and named behind, with the
 * busiest process as the limit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startMosquitto } from '../test/broker/mosquitto.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { ProcessSampler, type Usage } from './proc-usage.js';
import { fleetYaml } from './scale.js';

const LAG_LIMIT_MS = 2_000;
/** A shard this far behind cannot pass any more within a short run: it is stopped. */
const STOP_LAG_MS = 30_000;
/** After the last shard, the ingest processes have this long to finalise every minute. */
const DRAIN_MS = 60_000;

interface Options {
  sizes: number[];
  duration: string;
  shards: number;
  ingests: number;
}

interface ShardReport {
  result: { messages: { lost: number } };
  perf: {
    wallMs: number;
    simulatedMs: number;
    cpuPercent: number;
    peakRssMb: number;
    interrupted: boolean;
    realTime?: { lagMs: { p99: number; max: number } };
  };
}

interface Proc {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(k?)$/i.exec(s.trim());
  if (!m) throw new Error(`bench distributed-scale: ${s} is not a fleet size like 50000 or 50k`);
  return Math.round(Number(m[1]) * (m[2] ? 1000 : 1));
}

export function distributedScaleOptions(args: readonly string[]): Options {
  const o: Options = { sizes: [200_000, 100_000, 50_000, 25_000], duration: '5m', shards: 4, ingests: 2 };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i] as string, args[i + 1]];
    if (value === undefined) throw new Error(`bench distributed-scale: ${flag} needs a value`);
    if (flag === '--sizes') o.sizes = value.split(',').map(parseSize);
    else if (flag === '--duration') o.duration = value;
    else if (flag === '--shards') o.shards = Number(value);
    else if (flag === '--ingests') o.ingests = Number(value);
    else throw new Error(`bench distributed-scale: unknown option ${flag} (--sizes, --duration, --shards, --ingests)`);
  }
  return o;
}

/** `occusim run` of the fleet at real time, model fidelity: the single process and each shard alike. */
const pacedRun = (file: string, o: Options): string[] => [
  'run',
  file,
  '--speed',
  '1',
  '--duration',
  o.duration,
  '--fidelity',
  'model',
  '--quiet',
];

function occusim(root: string, args: string[]): Proc {
  const child = spawn(process.execPath, [join(root, 'bin/occusim.js'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-200_000)));
  child.stderr?.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

async function until(p: Proc, re: RegExp, timeoutMs: number): Promise<RegExpExecArray | null> {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    const m = re.exec(p.out());
    if (m) return m;
    if (p.child.exitCode !== null) throw new Error(`an occusim process exited ${p.child.exitCode}: ${p.err()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return null;
}

/** After SIGINT a run drains and writes its report; past this it is killed. */
const STOP_GRACE_MS = 120_000;

/** Stops a paced run that falls STOP_LAG_MS behind (its report is still written, unless its drain outlasts STOP_GRACE_MS). */
function stopWhenBehind(p: Proc, onStop: (why: string) => void): void {
  let once = false;
  p.child.stderr?.on('data', (c: Buffer) => {
    for (const m of c.toString().matchAll(/behind real time \(×[\d.]+\) by ([\d.]+) s at sim (\S+Z)/g)) {
      // Once: a second SIGINT would end the run's drain before it writes its report.
      if (once || Number(m[1]) * 1000 < STOP_LAG_MS || p.child.exitCode !== null) continue;
      once = true;
      onStop(`${m[1]} s behind at sim ${m[2]}`);
      setTimeout(() => p.child.kill('SIGKILL'), STOP_GRACE_MS).unref();
    }
  });
}

interface Written {
  xacts: number;
  rows: number;
}

async function written(url: string): Promise<Written> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ x: string; t: string }>(
      'SELECT xact_commit::text AS x, (tup_inserted + tup_updated + tup_deleted)::text AS t FROM pg_stat_database WHERE datname = current_database()',
    );
    return { xacts: Number(r.rows[0]?.x ?? 0), rows: Number(r.rows[0]?.t ?? 0) };
  } finally {
    await c.end();
  }
}

interface Side {
  wallMs: number;
  simulatedMs: number;
  processes: Array<{ name: string } & Usage>;
  totalCpuMs: number;
  lagP99Ms: number | null;
  sensingToStoredP99Ms: number | null;
  lost: number;
  pgWrites: { xactsPerS: number; rowsPerS: number };
  held: boolean;
  verdict: string;
}

const reportOf = (file: string): ShardReport | null =>
  existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ShardReport) : null;

async function singleRun(root: string, dir: string, file: string, o: Options, postgres: TestPostgres): Promise<Side> {
  const db = await postgres.createDatabase();
  const sampler = new ProcessSampler();
  sampler.add('postgres', postgres.pid(), true);
  const reportFile = join(dir, 'single.json');
  const before = await written(db);
  const t0 = performance.now();
  const run = occusim(root, [...pacedRun(file, o), '--store', db, '--report', reportFile]);
  // Sampled from /proc, not read from its report: a run killed after its grace writes none.
  sampler.add('occusim run', run.child.pid);
  let stopped: string | null = null;
  stopWhenBehind(run, (why) => {
    stopped ??= why;
    run.child.kill('SIGINT');
  });
  await run.exited;
  const wallMs = performance.now() - t0;
  sampler.stop();
  const after = await written(db);
  const r = reportOf(reportFile);
  const processes = [
    { name: 'occusim run', ...sampler.usage('occusim run') },
    { name: 'PostgreSQL', ...sampler.usage('postgres') },
  ];
  const lag = r?.perf.realTime?.lagMs.p99 ?? null;
  const held = r !== null && !r.perf.interrupted && lag !== null && lag < LAG_LIMIT_MS && r.result.messages.lost === 0;
  return {
    wallMs,
    simulatedMs: r?.perf.simulatedMs ?? 0,
    processes,
    totalCpuMs: processes.reduce((s, p) => s + p.cpuMs, 0),
    lagP99Ms: lag,
    sensingToStoredP99Ms:
      (r?.perf.realTime as { sensingToStoredMs?: { p99: number } } | undefined)?.sensingToStoredMs?.p99 ?? null,
    lost: r?.result.messages.lost ?? NaN,
    pgWrites: {
      xactsPerS: ((after.xacts - before.xacts) * 1000) / wallMs,
      rowsPerS: ((after.rows - before.rows) * 1000) / wallMs,
    },
    held,
    verdict: stopped !== null ? `behind (stopped ${stopped})` : held ? 'holds' : r === null ? 'failed' : 'behind',
  };
}

async function distributedRun(
  root: string,
  dir: string,
  file: string,
  o: Options,
  postgres: TestPostgres,
  trial: number,
): Promise<Side> {
  const broker = await startMosquitto();
  const db = await postgres.createDatabase();
  const sampler = new ProcessSampler();
  sampler.add('postgres', postgres.pid(), true);
  sampler.add('mosquitto', broker.pid());
  const ingests: Proc[] = [];
  const shards: Proc[] = [];
  try {
    for (let j = 1; j <= o.ingests; j++) {
      const p = occusim(root, [
        'serve',
        '--scenario',
        file,
        '--store',
        db,
        '--broker',
        broker.url,
        '--share-group',
        `scale${trial}`,
        '--partition',
        `${j}/${o.ingests}`,
        '--shards',
        String(o.shards),
        '--port',
        '0',
      ]);
      ingests.push(p);
      sampler.add(`ingest ${j}/${o.ingests}`, p.child.pid);
    }
    for (const p of ingests)
      if ((await until(p, /following \d+ shard clock/, 600_000)) === null)
        throw new Error('an ingest process did not start');
    const before = await written(db);
    const t0 = performance.now();
    let stopped: string | null = null;
    for (let i = 1; i <= o.shards; i++) {
      const p = occusim(root, [
        ...pacedRun(file, o),
        '--shard',
        `${i}/${o.shards}`,
        '--external-ingest',
        '--broker',
        broker.url,
        '--report',
        join(dir, `s${i}.json`),
      ]);
      shards.push(p);
      sampler.add(`shard ${i}/${o.shards}`, p.child.pid);
      stopWhenBehind(p, (why) => {
        if (stopped !== null) return;
        stopped = `shard ${i}/${o.shards} ${why}`;
        for (const s of shards) s.child.kill('SIGINT');
      });
    }
    await Promise.all(shards.map((s) => s.exited));
    const shardsEnd = performance.now();
    const drained =
      stopped === null &&
      (await Promise.all(ingests.map((p) => until(p, /shards done; every minute finalised/, DRAIN_MS)))).every(
        (m) => m !== null,
      );
    const wallMs = performance.now() - t0;
    sampler.stop();
    const after = await written(db);
    const reports = shards.map((_, i) => reportOf(join(dir, `s${i + 1}.json`)));
    // Written to a file: a fleet's merged report is larger than the output a child process keeps.
    const mergedFile = join(dir, 'merged.json');
    const merge = occusim(root, [
      'report',
      'merge',
      ...reports.map((_, i) => join(dir, `s${i + 1}.json`)),
      '--json',
      '--out',
      mergedFile,
      '--store',
      db,
      '--scenario',
      file,
    ]);
    if ((await merge.exited) !== 0) console.log(`  report merge failed: ${merge.err().trim().split('\n').pop() ?? ''}`);
    type Merged = { ledger: { packets: { lost: number } }; latencyMs: { p99?: number } };
    const merged = ((): Merged | null => {
      try {
        return JSON.parse(readFileSync(mergedFile, 'utf8')) as Merged;
      } catch {
        return null;
      }
    })();
    const processes = [
      ...reports.map((_, i) => ({
        name: `shard ${i + 1}/${o.shards}`,
        ...sampler.usage(`shard ${i + 1}/${o.shards}`),
      })),
      ...ingests.map((_, j) => ({
        name: `ingest ${j + 1}/${o.ingests}`,
        ...sampler.usage(`ingest ${j + 1}/${o.ingests}`),
      })),
      { name: 'mosquitto', ...sampler.usage('mosquitto') },
      { name: 'PostgreSQL', ...sampler.usage('postgres') },
    ];
    const lags = reports.map((r) => r?.perf.realTime?.lagMs.p99 ?? Infinity);
    const lagP99Ms = Math.max(...lags);
    const lost = merged?.ledger.packets.lost ?? NaN;
    const held = stopped === null && drained && lagP99Ms < LAG_LIMIT_MS && lost === 0;
    const busiest = [...processes].sort((a, b) => b.cpuMs - a.cpuMs)[0];
    const share = (p: Usage): string => `${((p.cpuMs / wallMs) * 100).toFixed(0)} % of a core`;
    let verdict = 'holds';
    if (!held) {
      const why =
        stopped ??
        (!drained
          ? `the ingest processes had not finalised ${DRAIN_MS / 1000} s after the shards' end (${((performance.now() - shardsEnd) / 1000).toFixed(0)} s)`
          : lagP99Ms >= LAG_LIMIT_MS
            ? `lag p99 ${lagP99Ms} ms`
            : `lost ${lost}`);
      verdict = `behind: ${why}; busiest ${busiest?.name} (${busiest ? share(busiest) : '—'}), machine ${((processes.reduce((s, p) => s + (Number.isNaN(p.cpuMs) ? 0 : p.cpuMs), 0) / wallMs) * 100).toFixed(0)} % of 200 %`;
    }
    return {
      wallMs,
      simulatedMs: Math.min(...reports.map((r) => r?.perf.simulatedMs ?? 0)),
      processes,
      totalCpuMs: processes.reduce((s, p) => s + p.cpuMs, 0),
      lagP99Ms: Number.isFinite(lagP99Ms) ? lagP99Ms : null,
      sensingToStoredP99Ms: merged?.latencyMs.p99 ?? null,
      lost,
      pgWrites: {
        xactsPerS: ((after.xacts - before.xacts) * 1000) / wallMs,
        rowsPerS: ((after.rows - before.rows) * 1000) / wallMs,
      },
      held,
      verdict,
    };
  } finally {
    for (const p of [...shards, ...ingests]) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all([...shards, ...ingests].map((p) => p.exited));
    broker.stop();
  }
}

const s1 = (ms: number | null): string => (ms === null || Number.isNaN(ms) ? '—' : (ms / 1000).toFixed(1));

function printSide(label: string, side: Side): void {
  console.log(`\n${label}: ${side.verdict}`);
  console.log(`  wall ${s1(side.wallMs)} s for ${s1(side.simulatedMs)} simulated s`);
  console.log('  | process | CPU s | % of a core | peak RSS MB |');
  console.log('  |---|---|---|---|');
  for (const p of side.processes)
    console.log(
      `  | ${p.name} | ${s1(p.cpuMs)} | ${((p.cpuMs / side.wallMs) * 100).toFixed(0)} | ${Number.isNaN(p.peakRssMb) ? '—' : p.peakRssMb.toFixed(0)} |`,
    );
  console.log(`  total CPU ${s1(side.totalCpuMs)} s`);
  console.log(
    `  lag p99 ${side.lagP99Ms ?? '—'} ms; sensing → stored p99 ${side.sensingToStoredP99Ms ?? '—'} ms; lost ${side.lost}`,
  );
  console.log(
    `  PostgreSQL writes: ${side.pgWrites.xactsPerS.toFixed(0)} transactions/s, ${side.pgWrites.rowsPerS.toFixed(0)} rows/s`,
  );
}

export async function runDistributedScaleBench(root: string, args: readonly string[]): Promise<void> {
  const o = distributedScaleOptions(args);
  const postgres = await startPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-distributed-scale-'));
  console.log(
    `\n## distributed-scale — ${o.shards} shards → mosquitto → ${o.ingests} ingest processes → PostgreSQL, model fidelity, ${o.duration} at --speed 1`,
  );
  try {
    for (const [n, target] of o.sizes.entries()) {
      const { text, sensors } = fleetYaml(root, target);
      const file = join(dir, `fleet-${sensors}.yaml`);
      writeFileSync(file, text);
      console.log(
        `\n### ${sensors.toLocaleString('en-US')} sensors (load average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')})`,
      );
      const single = await singleRun(root, dir, file, o, postgres);
      printSide('single process', single);
      const dist = await distributedRun(root, dir, file, o, postgres, n);
      printSide(`${o.shards} shards + ${o.ingests} ingest processes`, dist);
      const comparable = single.simulatedMs > 0 && dist.simulatedMs > 0;
      console.log(
        `\n  total CPU per simulated second, distributed / single: ${comparable ? `×${(dist.totalCpuMs / dist.simulatedMs / (single.totalCpuMs / single.simulatedMs)).toFixed(2)}` : '—'}`,
      );
      if (dist.held) {
        console.log(
          `\nlargest fleet tried that holds real time distributed: ${sensors.toLocaleString('en-US')} sensors`,
        );
        break;
      }
    }
  } finally {
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
