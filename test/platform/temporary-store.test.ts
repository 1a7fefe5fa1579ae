import { existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';

/**
 * A run without a store of its own writes to a temporary directory (issue 16, finding 12:
 * every run without --db left its store behind, gigabytes for a fleet run). The CLI passes
 * keepStore false unless --keep: the directory is gone once the run returns; the library
 * default keeps it and says so.
 */
const scenario = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

describe('the temporary store', () => {
  it('is deleted when the run ends with keepStore false (the CLI without --keep)', async () => {
    const report = await runScenario(scenario, {
      durationMs: 2 * 60_000,
      keepStore: false,
      mqttPort: 0,
      platformThread: false,
    });
    expect(report.dbKept).toBe(false);
    expect(existsSync(report.db)).toBe(false);
    expect(existsSync(dirname(report.db))).toBe(false);
  });

  it('is kept, and reported kept, by default (library callers read it afterwards)', async () => {
    const report = await runScenario(scenario, { durationMs: 2 * 60_000, mqttPort: 0, platformThread: false });
    try {
      expect(report.dbKept).toBe(true);
      expect(existsSync(report.db)).toBe(true);
    } finally {
      rmSync(dirname(report.db), { recursive: true, force: true });
    }
  });
});
