import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExploreReport } from '../../src/explore/explore.js';
import { DEFAULT_INVARIANTS } from '../../src/explore/invariants.js';
import { PLANTED_DEFECT, PLANTED_DEFECT_ENV } from '../../src/hive/planted-defect.js';
import type { RunReport } from '../../src/run/run-report.js';
import { parseFaultSchedule } from '../../src/scenario/fault-schedule.js';

/**
 * Issue #30 item 5: `occusim explore` finds a real defect in the product. The defect is planted
 * behind its test-only switch (src/hive/planted-defect.ts: a hive whose uplink is down while
 * the broker restarts forgets its oldest buffered batch); explore, run as a user runs it, must
 * find it within 8 runs of seed 5, confirm it replays, shrink it to at most 2 faults and print
 * a command that, run as printed, fails the same way — and passes without the switch.
 */
const SEED = 5;
const dir = mkdtempSync(join(tmpdir(), 'occusim-planted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const exec = (args: string[], env: NodeJS.ProcessEnv) =>
  promisify(execFile)(process.execPath, ['bin/occusim.js', ...args], {
    env,
    timeout: 400_000,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: `${e.stdout}${e.stderr}` }),
  );
const planted = { ...process.env, [PLANTED_DEFECT_ENV]: PLANTED_DEFECT };

/** The printed command's arguments (`occusim run 'quickstart' --duration 600s --faults '…'`), its single quotes undone. */
function argsOf(replay: string): string[] {
  const out: string[] = [];
  for (const m of replay.replace(/^occusim /, '').matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g))
    out.push(m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2]!);
  return out;
}

describe('the planted defect (restart-in-outage)', () => {
  it(`is found by explore within 8 runs of seed ${SEED}, shrunk to at most 2 faults, and its printed replay fails the same way`, async () => {
    const reportPath = join(dir, 'explore.json');
    const found = await exec(
      [
        'explore',
        'quickstart',
        '--runs',
        '8',
        '--duration',
        '10m',
        '--seed',
        String(SEED),
        '--kinds',
        'hive_outage,broker_restart',
        '--max-faults',
        '4',
        '--report',
        reportPath,
      ],
      planted,
    );
    expect(found.code, found.stdout).toBe(1);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as ExploreReport;
    const f = report.failures[0]!;
    expect(f.deterministic).toBe(true);
    expect(f.shrunk.length).toBeLessThanOrEqual(2);
    expect(f.shrunk.map((x) => x.kind).sort()).toEqual(['broker_restart', 'hive_outage']);
    expect(f.shrunkViolations.join()).toMatch(/^ledger-balanced: ledger: \d+ packet\(s\) lost/);
    expect(found.stdout).toContain(`replay: ${f.replay}`);

    // The printed command, run as printed (with a report to judge it by).
    const args = argsOf(f.replay);
    expect(args[0]).toBe('run');
    expect(parseFaultSchedule(args[args.indexOf('--faults') + 1]!)).toEqual({ ok: true, faults: f.shrunk });
    const replayed = join(dir, 'replay.json');
    const again = await exec([...args, '--quiet', '--report', replayed], planted);
    expect(again.code).toBe(1);
    const run = JSON.parse(readFileSync(replayed, 'utf8')) as RunReport;
    const ledger = DEFAULT_INVARIANTS.find((i) => i.name === 'ledger-balanced')!;
    expect(ledger.check(run.result, f.shrunk, run.result).map((v) => `ledger-balanced: ${v}`)).toEqual(
      f.shrunkViolations.filter((v) => v.startsWith('ledger-balanced')),
    );

    // Without the switch the same command holds: the failure is the planted defect's.
    const clean = await exec([...args, '--quiet', '--report', replayed], { ...process.env, [PLANTED_DEFECT_ENV]: '' });
    expect(clean.code).toBe(0);
    expect((JSON.parse(readFileSync(replayed, 'utf8')) as RunReport).result.messages.lost).toBe(0);
  }, 600_000);
});
