import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './fixtures/run-cli.js';

/**
 * The verdict on a consumer (issue 29 items 1–2), as a team gets it: `occusim receive --apply
 * MODE` (the built CLI, each in its own process) holds the state a naive, a first-wins and an
 * idempotent consumer would; the quickstart delivers to all three with duplicates, reordering
 * and revisions on; `occusim run --consumer-expect` writes what a correct consumer must hold,
 * and `occusim consumer-verify` reads each consumer's state over HTTP (`GET /state`) or from
 * its `--state` file. Needs `npm run build` (bin/occusim.js runs dist/).
 */
const root = new URL('../..', import.meta.url).pathname;
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MODES = ['naive', 'first-wins', 'idempotent', 'tiny'] as const;
type Mode = (typeof MODES)[number];

let dir = '';
const receivers = new Map<Mode, { child: ChildProcess; url: string; state: string }>();

/** A free loopback port (for the tiny consumer, which takes its port from the environment). */
async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** examples/tiny-consumer/consumer.mjs, the consumer of docs/load-testing.md, verifying with the Standard Webhooks library. */
async function startTiny(): Promise<{ child: ChildProcess; url: string; state: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'examples/tiny-consumer/consumer.mjs')], {
    cwd: root,
    env: { ...process.env, WEBHOOK_SECRET: SECRET, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${url}state`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { child, url, state: '' };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the tiny consumer did not start');
}

function startReceiver(mode: Mode): Promise<{ child: ChildProcess; url: string; state: string }> {
  if (mode === 'tiny') return startTiny();
  const state = join(dir, `${mode}.ndjson`);
  const child = spawn(
    process.execPath,
    [join(root, 'bin/occusim.js'), 'receive', '--port', '0', '--secret', SECRET, '--apply', mode, '--state', state],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(err);
      if (m?.[1]) resolve({ child, url: m[1], state });
    });
    child.on('exit', (code) => reject(new Error(`receive --apply ${mode} exited ${code}: ${err}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * The quickstart delivering to one consumer, duplicates, reordering and revisions on. One
 * organisation takes one subscription per event type, so each consumer gets a run of its own:
 * the same subscription (id, faults, hit events) every time, only the URL differs.
 */
function scenario(mode: Mode): string {
  const file = join(dir, `${mode}.yaml`);
  writeFileSync(
    file,
    `${readFileSync(join(root, 'scenarios/quickstart.yaml'), 'utf8')}
webhook_allow: [127.0.0.1/8]
webhooks:
  - name: consumer
    url: ${receivers.get(mode)?.url}
    secret: ${SECRET}
    event_types: [ROOM_OCCUPANCY_1M, TRAFFIC]
    faults: { duplicate: 0.1, reorder: { rate: 0.2, window: 4 }, revise: 0.3 }
`,
  );
  return file;
}

const expected = (mode: Mode = 'idempotent'): string => join(dir, `expected-${mode}.ndjson`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'occusim-consumers-'));
  for (const m of MODES) {
    receivers.set(m, await startReceiver(m));
    const r = await cli(
      'run',
      scenario(m),
      '--duration',
      '12m',
      '--quiet',
      '--consumer-expect',
      expected(m),
      '--expect',
      'webhooks.p99<60s',
      '--expect',
      'webhooks.errors<50%',
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    // Thresholds on delivery: the latency (wall) and the failed attempts (none here: faults that fail attempts are off).
    expect(r.out).toMatch(/webhooks\.p99<60s\s+[\d.]+ (ms|s)\s+pass/);
    expect(r.out).toMatch(/webhooks\.errors<50%\s+0\.0%\s+pass/);
  }
}, 200_000);

afterAll(async () => {
  for (const { child } of receivers.values()) await stop(child);
  rmSync(dir, { recursive: true, force: true });
});

const verify = (mode: Mode, ...more: string[]) => cli('consumer-verify', '--expected', expected(mode), ...more);

describe('consumer-verify on consumers of a faulty delivery', () => {
  it('writes the expected state, the same for every run of the seed, with the truth beside occupancy rows', () => {
    const text = readFileSync(expected(), 'utf8');
    for (const m of MODES) expect(readFileSync(expected(m), 'utf8')).toBe(text);
    const rows = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { subscription: string; type: string; truth: number | null });
    expect(new Set(rows.map((r) => r.subscription))).toEqual(new Set(['consumer']));
    expect(rows.filter((r) => r.type === 'ROOM_OCCUPANCY_1M').every((r) => typeof r.truth === 'number')).toBe(true);
    expect(rows.filter((r) => r.type === 'TRAFFIC').every((r) => r.truth === null)).toBe(true);
  });

  it('passes the idempotent consumer, over HTTP and from its state file', async () => {
    const r = await verify('idempotent', '--actual-url', `${receivers.get('idempotent')?.url}state`);
    expect(r.out).toMatch(
      /^consumer-verify \(consumer\): PASSED — expected (\d+) rows, actual \1: \1 matching, 0 missing, 0 extra, 0 wrong/,
    );
    expect(r.code).toBe(0);
    const receiver = receivers.get('idempotent');
    if (receiver) await stop(receiver.child);
    const fromFile = await verify('idempotent', '--actual', receiver?.state ?? '');
    expect(fromFile.code).toBe(0);
  });

  it('catches the naive consumer: duplicates counted twice, an older revision arriving last kept', async () => {
    const junit = join(dir, 'naive.xml');
    const r = await verify('naive', '--actual-url', `${receivers.get('naive')?.url}state`, '--json', '--junit', junit);
    expect(r.code).toBe(1);
    const v = JSON.parse(r.out) as {
      passed: boolean;
      wrong: number;
      missing: number;
      extra: number;
      first: { wrong: Array<{ type: string; expected: unknown; actual: unknown }> };
    };
    expect(v.passed).toBe(false);
    expect(v.missing + v.extra).toBe(0);
    const traffic = v.first.wrong.filter((d) => d.type === 'TRAFFIC') as Array<{
      expected: { in: number; out: number };
      actual: { in: number; out: number };
    }>;
    // Sums of a minute: a duplicate only ever adds.
    expect(traffic.length).toBeGreaterThan(0);
    expect(traffic.every((d) => d.actual.in + d.actual.out > d.expected.in + d.expected.out)).toBe(true);
    expect(readFileSync(junit, 'utf8')).toMatch(/<failure message="\d+ of \d+ expected rows"/);
    // Occupancy: the last arrival is not the latest revision.
    const occupancy = await verify('naive', '--actual-url', `${receivers.get('naive')?.url}state`);
    expect(occupancy.out).toMatch(/ROOM_OCCUPANCY(_1M)? room_\w+ [\dT:-]+Z: expected \d+, got \d+/);
  });

  it('passes the tiny consumer of the docs, which verifies every request (injected revisions, duplicates) with the Standard Webhooks library', async () => {
    const r = await verify('tiny', '--actual-url', `${receivers.get('tiny')?.url}state`);
    expect(r.out).toMatch(/^consumer-verify \(consumer\): PASSED/);
    expect(r.code).toBe(0);
  });

  it('catches the first-wins consumer: revisions of a minute ignored', async () => {
    const r = await verify('first-wins', '--actual-url', `${receivers.get('first-wins')?.url}state`, '--json');
    expect(r.code).toBe(1);
    const v = JSON.parse(r.out) as {
      wrong: number;
      first: { wrong: Array<{ type: string; expected: number; actual: number }> };
    };
    expect(v.wrong).toBeGreaterThan(0);
    // Its sums are right (it dedupes); the minutes it kept are the injected earlier revision, one more.
    expect(v.first.wrong.every((d) => d.type === 'ROOM_OCCUPANCY_1M' && d.actual === d.expected + 1)).toBe(true);
  });

  it('refuses a malformed state with file:line and the field, exit 2', async () => {
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(
      bad,
      '{"type":"TRAFFIC","subject":"s","minute":0,"value":1}\n{"type":"TRAFFIC","subject":"s","minute":5,"value":1}\n',
    );
    const r = await verify('naive', '--actual', bad);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bad\.ndjson:2: minute: /);
  });
});
