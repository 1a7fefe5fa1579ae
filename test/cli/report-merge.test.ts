import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMosquitto } from '../broker/mosquitto.js';
import { threeHiveScenario } from '../run/fixtures/three-hives.js';
import { describeWithBinaries } from '../support/external-binaries.js';
import { cli } from './fixtures/run-cli.js';

/** `occusim run --shard i/n` and `occusim report merge`: refusals are one line and exit 2; a sharded run merges to its ledger. */
const root = new URL('../../', import.meta.url).pathname;
const quickstart = join(root, 'scenarios/quickstart.yaml');
const dir = mkdtempSync(join(tmpdir(), 'occusim-merge-'));

function oneLine(err: string): void {
  expect(err.trim().split('\n')).toHaveLength(1);
  expect(err).not.toMatch(/\n\s+at /);
}

describe('run --shard refusals', () => {
  it('a shard that is not i/n, or without --broker, or beyond the hives: one line, exit 2', async () => {
    for (const [args, text] of [
      [['--shard', '1-2', '--broker', 'mqtt://127.0.0.1:1'], '--shard must be i/n (slice i of n, e.g. 1/2), got "1-2"'],
      [['--shard', '1/2'], '--shard 1/2 needs --broker mqtt://…: the broker every shard publishes to'],
      [['--shard', '3/2', '--broker', 'mqtt://127.0.0.1:1'], '--shard 3/2: want i/n with 1 ≤ i ≤ n'],
      [
        ['--shard', '1/2', '--broker', 'mqtt://127.0.0.1:1'],
        '--shard 1/2: the scenario has 1 hive(s), so at most 1 shards',
      ],
      [
        ['--broker', 'mqtt://127.0.0.1:1', '--external-ingest'],
        '--external-ingest needs --shard i/n: the shard whose clock the ingest processes (serve --shards n) follow',
      ],
    ] as const) {
      const r = await cli('run', quickstart, ...args);
      expect(r.code).toBe(2);
      oneLine(r.err);
      expect(r.err).toContain(text);
    }
  });
});

describe('report merge refusals', () => {
  it('a missing file, a file that is not JSON or not a report: one line, exit 2', async () => {
    const notJson = join(dir, 'x.json');
    writeFileSync(notJson, '{');
    const notReport = join(dir, 'y.json');
    writeFileSync(notReport, '{"a":1}');
    for (const [file, text] of [
      [join(dir, 'absent.json'), 'absent.json'],
      [notJson, 'not JSON'],
      [notReport, 'not a run report'],
    ] as const) {
      const r = await cli('report', 'merge', file);
      expect(r.code).toBe(2);
      oneLine(r.err);
      expect(r.err).toContain(text);
    }
    // The store's series need the truth they are compared with, and the other way round.
    for (const args of [
      ['--store', 'postgres://u@h/db'],
      ['--scenario', quickstart],
    ]) {
      const half = await cli('report', 'merge', notReport, ...args);
      expect(half.code).toBe(2);
      oneLine(half.err);
      expect(half.err).toContain('--store and --scenario go together');
    }
    const none = await cli('report', 'merge');
    expect(none.code).toBe(2);
    oneLine(none.err);
  });
});

describeWithBinaries(['mosquitto'], 'two shards through the command line (Debian mosquitto)', () => {
  let mosquitto: Awaited<ReturnType<typeof startMosquitto>>;
  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });
  afterAll(() => mosquitto?.stop());

  it('run --shard 1/2 and 2/2 --report, then report merge: the whole ledger, lost 0; a shard twice is refused', async () => {
    const scenario = join(dir, 'three-hives.yaml');
    writeFileSync(scenario, stringify(threeHiveScenario('5m')));
    const runs = await Promise.all(
      [1, 2].map((i) =>
        cli(
          'run',
          scenario,
          '--shard',
          `${i}/2`,
          '--broker',
          mosquitto.url,
          '--report',
          join(dir, `s${i}.json`),
          '--quiet',
          '--platform-thread',
          'off',
        ),
      ),
    );
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const out = join(dir, 'merged.json');
    const merged = await cli('report', 'merge', join(dir, 's2.json'), join(dir, 's1.json'), '--out', out);
    expect(merged.code, merged.err).toBe(0);
    expect(merged.out).toMatch(
      /^quickstart-3-hives seed 7: 2 shards, 3 hives, \d+ sensors\npackets: sent (\d+) = stored \1 \+ dead-lettered 0 \+ lost 0\n/,
    );
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { ledger: { packets: { lost: number } } };
    expect(doc.ledger.packets.lost).toBe(0);
    const json = await cli('report', 'merge', join(dir, 's1.json'), join(dir, 's2.json'), '--json');
    expect(JSON.parse(json.out)).toEqual(doc);
    const twice = await cli('report', 'merge', join(dir, 's1.json'), join(dir, 's1.json'));
    expect(twice.code).toBe(2);
    oneLine(twice.err);
    expect(twice.err).toContain('are both shard 1/2');
  }, 300_000);
});
