/**
 * `npm run bench -- golden [--write] [--dump DIR]`: fingerprints (sha256) of what a run's users read —
 * the report's deterministic part, the stored series and event outbox, each webhook
 * subscription's requests, the `--record` capture's bytes — for quickstart and office-day at
 * `--speed max` with their seeds, compared with test/golden/fingerprints.json (issue 31: the
 * redesign changes no result). `--write` records them, with the commit they were made at.
 * The comparison exits 1 naming each part that differs; test/run/golden.slow.test.ts runs it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScenario } from '../src/run/run-scenario.js';
import { loadScenarioFile } from '../src/scenario/load.js';
import type { ScenarioModel } from '../src/scenario/model.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { EVENT_TYPES } from '../src/core/event-types.js';

/** The scenarios fingerprinted, each shortened to what a test can afford (the file's seed kept). */
export const GOLDEN_RUNS = [
  // The whole file: 3 h of a Monday morning, arrivals, a standup, departures.
  { name: 'quickstart', file: 'scenarios/quickstart.yaml', durationMs: 3 * 3_600_000 },
  // 06:00–09:00 of the 24 h day: three floors, empty at first, then the arrivals (mean 08:30–08:45).
  { name: 'office-day', file: 'scenarios/office-day.yaml', durationMs: 3 * 3_600_000 },
] as const;

/**
 * Event types delivered by webhook: every type but DETECTIONS, which sends one request per
 * presence packet (tens of thousands per run) and repeats what the stored series already holds.
 */
const HOOK_TYPES = EVENT_TYPES.filter((t) => t !== 'DETECTIONS');
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** One scenario's fingerprints: part name → sha256 hex (and counts, which say what a hash covers). */
export type Fingerprints = Record<string, string | number>;

export interface GoldenFile {
  /** The commit the fingerprints were made at (`git rev-parse HEAD`; "+dirty" with uncommitted changes under src/). */
  commit: string;
  runs: Record<string, Fingerprints>;
}

const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/**
 * The report without what the wall clock decides: `perf` (wall and CPU times, rates, RSS,
 * thread layout, webhook latencies and wall-clock timestamps) and `db`/`dbKept` (the temporary
 * store's path). `result`, `scenario`, `seed` and `expectations` are the run's outcome.
 */
export function deterministicReport(report: object): object {
  const { perf: _perf, db: _db, dbKept: _kept, ...rest } = report as Record<string, unknown>;
  return rest;
}

/** What the run's store holds per minute and as events, as stored-series.ts reads it (row ids left out). */
function storeTexts(db: string, model: ScenarioModel): { presence: string; traffic: string; events: string } {
  const store = new SqliteStore(db);
  try {
    const spaces = [...model.floors, ...model.rooms, ...model.zones].map((s) => s.id).sort();
    const sensors = model.sensors.map((s) => s.id).sort();
    return {
      presence: JSON.stringify(spaces.map((id) => [id, store.presenceMinutes(id)])),
      traffic: JSON.stringify(sensors.map((id) => [id, store.trafficMinutes(id)])),
      events: JSON.stringify(store.events().map(({ id: _id, ...e }) => e)),
    };
  } finally {
    store.close();
  }
}

/**
 * A loopback endpoint that answers 204 at once and keeps each subscription's requests apart
 * (one path per subscription): each subscription's order repeats, their interleaving does not.
 */
async function startHookReceiver(): Promise<{
  url: (sub: string) => string;
  requests: Map<string, { body: string; head: string }[]>;
  close: () => Promise<void>;
}> {
  const requests = new Map<string, { body: string; head: string }[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sub = String(req.url);
      const head = ['webhook-id', 'webhook-timestamp', 'webhook-signature']
        .map((h) => String(req.headers[h]))
        .join(' ');
      let list = requests.get(sub);
      if (list === undefined) requests.set(sub, (list = []));
      list.push({ body: Buffer.concat(chunks).toString('utf8'), head });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (sub) => `http://127.0.0.1:${port}/${sub}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Runs one scenario with a store, a capture and a webhook per type, and fingerprints each. */
async function fingerprintRun(
  root: string,
  run: (typeof GOLDEN_RUNS)[number],
  dump: string | null,
): Promise<Fingerprints> {
  const loaded = loadScenarioFile(join(root, run.file));
  if (!loaded.ok) throw new Error(`${run.file} does not load`);
  const model = loaded.model;
  const dir = mkdtempSync(join(tmpdir(), `occusim-golden-${run.name}-`));
  const receiver = await startHookReceiver();
  try {
    const capture = join(dir, 'capture.occap');
    const report = await runScenario(model, {
      durationMs: run.durationMs,
      speed: 'max',
      dbPath: join(dir, 'store.sqlite'),
      record: capture,
      webhooks: {
        allow: ['127.0.0.1/8'],
        // Simulated timestamps: the signature's bytes repeat too (docs/webhooks.md).
        timestamps: 'simulated',
        declared: HOOK_TYPES.map((t) => ({
          orgId: model.org.id,
          input: {
            name: t.toLowerCase(),
            eventTypes: [t],
            url: receiver.url(t.toLowerCase()),
            secret: SECRET,
            // The longest timeout allowed: a retry after a timeout on a loaded machine would
            // change what the receiver sees (a wall-clock timeout is what a run cannot repeat).
            httpTimeoutS: 60,
          },
        })),
      },
    });
    await receiver.close();
    if (dump !== null)
      writeDump(join(dump, run.name), report, join(dir, 'store.sqlite'), model, capture, receiver.requests);
    const fp: Fingerprints = {
      report: sha256(JSON.stringify(deterministicReport(report))),
    };
    const stored = storeTexts(join(dir, 'store.sqlite'), model);
    fp['stored.presence'] = sha256(stored.presence);
    fp['stored.traffic'] = sha256(stored.traffic);
    fp['stored.events'] = sha256(stored.events);
    const bytes = readFileSync(capture);
    fp.capture = sha256(bytes);
    fp['capture.bytes'] = bytes.length;
    for (const t of HOOK_TYPES) {
      const sub = `/${t.toLowerCase()}`;
      const got = receiver.requests.get(sub) ?? [];
      fp[`webhook.${t}.count`] = got.length;
      fp[`webhook.${t}.bodies`] = sha256(got.map((r) => r.body).join('\n'));
      fp[`webhook.${t}.headers`] = sha256(got.map((r) => r.head).join('\n'));
    }
    return fp;
  } finally {
    await receiver.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `--dump DIR`: what was fingerprinted, as files (the whole report, perf included; the store's
 * texts; each subscription's requests; the capture), so two trees' runs can be diffed part by part.
 */
function writeDump(
  dir: string,
  report: object,
  db: string,
  model: ScenarioModel,
  capture: string,
  requests: Map<string, { body: string; head: string }[]>,
): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  const stored = storeTexts(db, model);
  for (const [k, v] of Object.entries(stored)) writeFileSync(join(dir, `stored.${k}.json`), v);
  copyFileSync(capture, join(dir, 'capture.occap'));
  for (const [sub, list] of requests) {
    writeFileSync(join(dir, `webhook${sub.replace('/', '.')}.txt`), list.map((r) => `${r.head}\n${r.body}\n`).join(''));
  }
}

/** Every golden run's fingerprints, in GOLDEN_RUNS order. */
export async function goldenFingerprints(
  root: string,
  dump: string | null = null,
): Promise<Record<string, Fingerprints>> {
  const runs: Record<string, Fingerprints> = {};
  for (const run of GOLDEN_RUNS) runs[run.name] = await fingerprintRun(root, run, dump);
  return runs;
}

/** One line per part that differs ("quickstart stored.presence: recorded … got …"); empty when equal. */
export function fingerprintDiffs(expected: Record<string, Fingerprints>, got: Record<string, Fingerprints>): string[] {
  const out: string[] = [];
  for (const name of new Set([...Object.keys(expected), ...Object.keys(got)])) {
    const e = expected[name] ?? {};
    const g = got[name] ?? {};
    for (const part of new Set([...Object.keys(e), ...Object.keys(g)])) {
      if (e[part] !== g[part]) out.push(`${name} ${part}: recorded ${String(e[part])}, got ${String(g[part])}`);
    }
  }
  return out;
}

export const GOLDEN_FILE = 'test/golden/fingerprints.json';

function headCommit(root: string): string {
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: root, encoding: 'utf8' }).trim();
  return dirty === '' ? head : `${head}+dirty`;
}

export async function runGoldenBench(root: string, args: readonly string[]): Promise<void> {
  console.log('== golden: fingerprints of quickstart and office-day (report, store, webhooks, capture)');
  const t0 = performance.now();
  const dumpAt = args.indexOf('--dump');
  const got = await goldenFingerprints(root, dumpAt >= 0 ? (args[dumpAt + 1] ?? null) : null);
  console.log(`  ran in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const path = join(root, GOLDEN_FILE);
  if (args.includes('--write')) {
    const file: GoldenFile = { commit: headCommit(root), runs: got };
    writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
    console.log(`  written to ${GOLDEN_FILE} (commit ${file.commit})`);
    return;
  }
  const recorded = JSON.parse(readFileSync(path, 'utf8')) as GoldenFile;
  const diffs = fingerprintDiffs(recorded.runs, got);
  if (diffs.length === 0) {
    console.log(`  identical to ${GOLDEN_FILE} (recorded at ${recorded.commit})`);
    return;
  }
  console.log(`  DIFFERENT from ${GOLDEN_FILE} (recorded at ${recorded.commit}):`);
  for (const d of diffs) console.log(`    ${d}`);
  process.exitCode = 1;
}
