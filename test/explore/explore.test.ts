import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/core/time.js';
import { explore, replayCommand } from '../../src/explore/explore.js';
import type { RunResult } from '../../src/run/report.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { parseFaultSchedule } from '../../src/scenario/fault-schedule.js';
import type { FaultFile } from '../../src/scenario/network-schema.js';

const SEED = 20261128;
const DURATION_MS = 10 * 60_000;
const at = (f: FaultFile): number => parseDuration(f.at) ?? 0;
const end = (f: FaultFile): number => at(f) + (parseDuration(f.duration ?? '0s') ?? 0);

/** The planted defect: an ack dropped when a broker restart falls inside a hive outage (one packet unexplained). */
function planted(faults: readonly FaultFile[]): boolean {
  return faults.some(
    (r) =>
      r.kind === 'broker_restart' && faults.some((o) => o.kind === 'hive_outage' && at(o) <= at(r) && at(r) < end(o)),
  );
}

describe('occusim explore', () => {
  let clean: RunResult;
  beforeAll(async () => {
    clean = (await runScenario('scenarios/quickstart.yaml', { durationMs: DURATION_MS, keepStore: false })).result;
  });

  it(`finds a planted defect, confirms it replays, and shrinks it to at most 2 faults (seed ${SEED})`, async () => {
    const runs: FaultFile[][] = [];
    const report = await explore({
      scenario: 'scenarios/quickstart.yaml',
      runs: 200,
      durationMs: DURATION_MS,
      seed: SEED,
      kinds: ['hive_outage', 'broker_restart', 'sensor_offline'],
      maxFaults: 5,
      targets: { hives: ['Hive 1'], sensors: ['Kitchen', 'Front door counter'] },
      run: (faults) => {
        runs.push(faults);
        const r = structuredClone(clean);
        if (planted(faults)) r.messages.lost += 1;
        return Promise.resolve({ result: r });
      },
    });
    expect(report.failures.length).toBeGreaterThan(0);
    const f = report.failures[0]!;
    expect(f.violations.join()).toMatch(/ledger-balanced: ledger: 1 packet\(s\) lost, 0 explained/);
    expect(f.deterministic).toBe(true);
    expect(f.shrunk.length).toBeLessThanOrEqual(2);
    expect(planted(f.shrunk)).toBe(true);
    // The printed command carries the shrunk schedule itself.
    const schedule = /--faults '(.*)'$/.exec(f.replay)?.[1];
    expect(schedule && parseFaultSchedule(schedule)).toEqual({ ok: true, faults: f.shrunk });
    // Every schedule drawn is a valid --faults argument.
    for (const faults of runs.slice(0, 50))
      expect(
        parseFaultSchedule(replayCommand('q', 1, DURATION_MS, faults).split("--faults '")[1]!.slice(0, -1)).ok,
      ).toBe(true);
  });

  it('draws the same schedules for the same seed', async () => {
    const drawn = async (): Promise<string[]> => {
      const seen: string[] = [];
      await explore({
        scenario: 'q',
        runs: 20,
        durationMs: DURATION_MS,
        seed: SEED,
        kinds: ['hive_outage', 'broker_restart'],
        targets: { hives: ['Hive 1'], sensors: ['Kitchen'] },
        run: (faults) => (seen.push(JSON.stringify(faults)), Promise.resolve({ result: clean })),
      });
      return seen;
    };
    expect(await drawn()).toEqual(await drawn());
  });

  it('reports the same failures in the same order whatever the number of jobs', async () => {
    const search = (jobs: number) =>
      explore({
        scenario: 'q',
        runs: 30,
        jobs,
        durationMs: DURATION_MS,
        seed: SEED,
        kinds: ['hive_outage', 'broker_restart'],
        maxFaults: 4,
        targets: { hives: ['Hive 1'], sensors: ['Kitchen'] },
        // Runs finish out of order: a planted run takes longer.
        run: async (faults) => {
          await new Promise((r) => setTimeout(r, planted(faults) ? 5 : 0));
          const r = structuredClone(clean);
          if (planted(faults)) r.messages.lost += 1;
          return { result: r };
        },
      });
    const one = await search(1);
    const four = await search(4);
    expect(one.failures.length).toBeGreaterThan(1);
    expect(four.failures.map((f) => [f.index, f.replay])).toEqual(one.failures.map((f) => [f.index, f.replay]));
    expect(four.runs).toBe(30);
  });

  it('counts a run that throws as a violation of no-crash, confirmed and shrunk like the others', async () => {
    const report = await explore({
      scenario: 'q',
      runs: 5,
      durationMs: DURATION_MS,
      seed: SEED,
      kinds: ['hive_outage', 'broker_restart'],
      maxFaults: 3,
      targets: { hives: ['Hive 1'], sensors: ['Kitchen'] },
      run: (faults) =>
        faults.some((f) => f.kind === 'broker_restart')
          ? Promise.reject(new Error('broker: closed, cannot restart'))
          : Promise.resolve({ result: clean }),
    });
    const f = report.failures[0]!;
    expect(f.violations).toEqual(['no-crash: broker: closed, cannot restart']);
    expect(f.deterministic).toBe(true);
    expect(f.shrunk).toEqual([expect.objectContaining({ kind: 'broker_restart' })]);
  });

  it('judges --expect thresholds after every run and carries them into the replay command; a bad one is refused before any run', async () => {
    const run = (args: string[]) =>
      promisify(execFile)(
        process.execPath,
        [
          'bin/occusim.js',
          'explore',
          'quickstart',
          '--runs',
          '1',
          '--max-faults',
          '1',
          '--kinds',
          'broker_restart',
          '--duration',
          '5m',
          '--jobs',
          '1',
          ...args,
        ],
        { timeout: 240_000 },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
      );
    const failed = await run(['--expect', 'messages.lost==0', '--expect', 'messages.delivered<1']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/run 0: expect: messages\.delivered<1: measured \d+\n/);
    expect(failed.stdout).toMatch(
      /replay: occusim run 'quickstart' --duration 300s --faults 'broker_restart@\d+s' --expect 'messages.lost==0' --expect 'messages.delivered<1'\n/,
    );
    const bad = await run(['--expect', 'rooms.nope<1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--expect: /);
  }, 300_000);

  it("counts a user's invariant command as a judge: it reads the run's report and store, and its non-zero exit is a violation", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-explore-test-'));
    const run = (cmd: string) =>
      promisify(execFile)(
        process.execPath,
        [
          'bin/occusim.js',
          'explore',
          'quickstart',
          '--runs',
          '1',
          '--max-faults',
          '1',
          '--kinds',
          'broker_restart',
          '--duration',
          '5m',
          '--invariant-cmd',
          cmd,
          '--junit',
          join(dir, 'junit.xml'),
        ],
        { timeout: 240_000 },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
      );
    const held = await run(
      'grep -q \'"lost":0\' "$OCCUSIM_REPORT" && test -s "${OCCUSIM_STORE#sqlite:}" && test -n "$OCCUSIM_FAULTS"',
    );
    expect(held.code).toBe(0);
    expect(readFileSync(join(dir, 'junit.xml'), 'utf8')).toMatch(/failures="0"/);
    const violated = await run('echo "consumer state wrong" >&2; exit 3');
    expect(violated.code).toBe(1);
    expect(violated.stdout).toMatch(/invariant-cmd: exit 3: consumer state wrong/);
    expect(readFileSync(join(dir, 'junit.xml'), 'utf8')).toMatch(
      /<failure message="invariant-cmd: exit 3: consumer state wrong"/,
    );
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);
});
