import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { cli } from './fixtures/run-cli.js';

/** Thresholds that fail CI (k6-style), JUnit for CI systems, --json for scripts, exit 130 when interrupted. */
const root = new URL('../../', import.meta.url).pathname;
const quickstart = join(root, 'scenarios/quickstart.yaml');
const dir = (): string => mkdtempSync(join(tmpdir(), 'occusim-thr-'));

interface JunitCase {
  '@_name': string;
  failure?: { '@_message': string; '#text'?: string };
}
interface JunitDoc {
  testsuites: { '@_tests': string; '@_failures': string; testsuite: { '@_name': string; testcase: JunitCase[] } };
}

function parseJunit(file: string): JunitDoc {
  const xml = readFileSync(file, 'utf8');
  expect(XMLValidator.validate(xml)).toBe(true);
  return new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'testcase' }).parse(xml) as JunitDoc;
}

describe('thresholds', () => {
  it('a failing threshold exits 1 with the table, and JUnit names each threshold', async () => {
    const d = dir();
    const junit = join(d, 'junit.xml');
    const r = await cli(
      'run',
      quickstart,
      '--duration',
      '20m',
      '--quiet',
      '--expect',
      'rooms.mae<0.000001',
      '--expect',
      'messages.lost==0',
      '--expect',
      'latency.p99<15s',
      '--expect',
      'webhooks.lost==0',
      '--junit',
      junit,
    );
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/Thresholds\n\s+threshold\s+measured\s+verdict/);
    expect(r.out).toMatch(/messages\.lost==0\s+0\s+pass/);
    expect(r.out).toMatch(/latency\.p99<15s\s+\d+\.\d s\s+pass/);
    expect(r.out).toMatch(/webhooks\.lost==0\s+not measured\s+FAIL/);
    expect(r.out).toMatch(/4 threshold\(s\): \d failed/);
    const doc = parseJunit(junit);
    const cases = doc.testsuites.testsuite.testcase;
    expect(cases.map((c) => c['@_name'])).toEqual([
      'messages are not lost',
      'rooms.mae<0.000001',
      'messages.lost==0',
      'latency.p99<15s',
      'webhooks.lost==0',
    ]);
    expect(cases.find((c) => c['@_name'] === 'messages.lost==0')?.failure).toBeUndefined();
    expect(cases.find((c) => c['@_name'] === 'webhooks.lost==0')?.failure?.['@_message']).toMatch(/not measured/);
    expect(Number(doc.testsuites['@_failures'])).toBe(cases.filter((c) => c.failure).length);
  });

  it('thresholds of the scenario\u2019s expect: block pass: exit 0, and the report carries the verdicts', async () => {
    const d = dir();
    const scenario = join(d, 'with-expect.yaml');
    writeFileSync(
      scenario,
      `${readFileSync(quickstart, 'utf8')}\nexpect:\n  - rooms.mae < 0.5\n  - traffic.recall >= 50%\n  - deadletters == 0\n`,
    );
    const report = join(d, 'r.json');
    const r = await cli('run', scenario, '--duration', '30m', '--quiet', '--report', report);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/3 threshold\(s\): all passed/);
    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      expectations: Array<{ passed: boolean; measured: number }>;
    };
    expect(json.expectations.map((v) => v.passed)).toEqual([true, true, true]);
  });

  it('an interrupted run (SIGINT) prints what it simulated and exits 130', async () => {
    const running = cli('run', quickstart, '--speed', '60', '--quiet');
    await new Promise((r) => setTimeout(r, 1500));
    process.emit('SIGINT');
    const r = await running;
    expect(r.code).toBe(130);
  });
});

describe('--json', () => {
  it('validate --json: one document with counts or located errors', async () => {
    const ok = await cli('validate', quickstart, '--json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ valid: true, errors: [], counts: { sensors: 9, hives: 1 } });
    const bad = await cli('validate', join(root, 'test/scenario/fixtures/unknown-field.yaml'), '--json');
    expect(bad.code).toBe(2);
    const doc = JSON.parse(bad.out) as {
      valid: boolean;
      errors: Array<{ line: number; path: string; message: string }>;
    };
    expect(doc.valid).toBe(false);
    expect(doc.errors[0]).toMatchObject({ line: expect.any(Number), message: expect.stringMatching(/unknown field/) });
  });

  it('check --json and --junit: counts, violations, one JUnit case per rule', async () => {
    const d = dir();
    const capture = join(d, 'q.occap');
    expect((await cli('run', quickstart, '--duration', '3m', '--quiet', '--record', capture)).code).toBe(0);
    const junit = join(d, 'check.xml');
    const r = await cli('check', capture, '--json', '--junit', junit);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { conformant: boolean; counts: { uplinks: number }; violations: unknown[] };
    expect(doc).toMatchObject({ conformant: true, violations: [] });
    expect(doc.counts.uplinks).toBeGreaterThan(10);
    const cases = parseJunit(junit).testsuites.testsuite.testcase;
    expect(cases.map((c) => c['@_name'])).toEqual([
      'messages arrived',
      'topic',
      'decode',
      'required',
      'known-sensor',
      'sequence',
      'retransmission',
      'timestamp',
      'limits',
      'ack',
      'heartbeat',
    ]);
    expect(cases.every((c) => c.failure === undefined)).toBe(true);
  });

  it('deadletters --json', async () => {
    const db = join(dir(), 'store.sqlite');
    const store = new SqliteStore(db);
    store.writeDeadLetter({
      receivedAtMs: Date.UTC(2026, 2, 2, 7),
      topic: 'occusim/v1/hives/HV1/uplink',
      reason: 'DECODE_FAILED',
      message: 'bad\nbytes',
      payload: new Uint8Array([1]),
    });
    store.close();
    const r = await cli('deadletters', '--db', db, '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      db,
      deadLetters: [
        {
          receivedAt: '2026-03-02T07:00:00.000Z',
          reason: 'DECODE_FAILED',
          topic: 'occusim/v1/hives/HV1/uplink',
          message: 'bad\nbytes',
        },
      ],
    });
  });
});

describe('temporary stores', () => {
  it('are deleted at exit unless --db or --keep', async () => {
    const d = dir();
    const temp = await cli('run', quickstart, '--duration', '5m', '--quiet', '--report', join(d, 'a.json'));
    const a = JSON.parse(readFileSync(join(d, 'a.json'), 'utf8')) as { db: string; dbKept: boolean };
    expect(temp.code).toBe(0);
    expect(a.dbKept).toBe(false);
    expect(existsSync(a.db)).toBe(false);
    await cli('run', quickstart, '--duration', '5m', '--quiet', '--keep', '--report', join(d, 'b.json'));
    const b = JSON.parse(readFileSync(join(d, 'b.json'), 'utf8')) as { db: string; dbKept: boolean };
    expect(b.dbKept).toBe(true);
    expect(existsSync(b.db)).toBe(true);
    const named = join(d, 'named.sqlite');
    await cli('run', quickstart, '--duration', '5m', '--quiet', '--db', named);
    expect(existsSync(named)).toBe(true);
  });
});
