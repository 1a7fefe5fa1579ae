import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  GOLDEN_FILE,
  GOLDEN_RUNS,
  deterministicReport,
  fingerprintDiffs,
  goldenFingerprints,
  type GoldenFile,
} from '../../bench/golden.js';

/**
 * Results do not change unnoticed (issue 31: a redesign of the assembly, results
 * byte-identical): quickstart (3 h, the whole file) and office-day (its first 3 h) at
 * `--speed max` with their seeds, fingerprinted as `npm run bench -- golden` does — the
 * report's deterministic part, the stored series and event outbox, each webhook subscription's
 * requests (bodies, and ids, simulated timestamps and signatures), the `--record` capture's
 * bytes — against test/golden/fingerprints.json. A deliberate change of results re-records
 * them with `npm run bench -- golden --write` and says why in its commit.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('golden fingerprints (bench/golden.ts)', () => {
  it('the recorded file covers every golden run and names the commit it was made at', () => {
    const recorded = JSON.parse(readFileSync(`${root}${GOLDEN_FILE}`, 'utf8')) as GoldenFile;
    expect(recorded.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(Object.keys(recorded.runs)).toEqual(GOLDEN_RUNS.map((r) => r.name));
  });

  it('leaves only wall-clock figures and the temporary store path out of the report', () => {
    const report = { scenario: 's', seed: 1, result: { a: 1 }, perf: { wallMs: 3 }, db: '/tmp/x', dbKept: true };
    expect(deterministicReport(report)).toEqual({ scenario: 's', seed: 1, result: { a: 1 } });
  });

  it('names each part that differs, and only those', () => {
    const a = { quickstart: { report: 'aa', capture: 'cc' } };
    expect(fingerprintDiffs(a, { quickstart: { report: 'aa', capture: 'cc' } })).toEqual([]);
    expect(fingerprintDiffs(a, { quickstart: { report: 'ab', capture: 'cc' } })).toEqual([
      'quickstart report: recorded aa, got ab',
    ]);
    expect(fingerprintDiffs(a, {})).toEqual([
      'quickstart report: recorded aa, got undefined',
      'quickstart capture: recorded cc, got undefined',
    ]);
  });

  it('quickstart and office-day give the recorded report, store, webhook requests and capture', async () => {
    const recorded = JSON.parse(readFileSync(`${root}${GOLDEN_FILE}`, 'utf8')) as GoldenFile;
    const got = await goldenFingerprints(root);
    expect(fingerprintDiffs(recorded.runs, got)).toEqual([]);
  }, 600_000);
});
