import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { storedRunText } from '../support/stored-series.js';

const dir = mkdtempSync(join(tmpdir(), 'occusim-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const loaded = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
if (!loaded.ok) throw new Error('quickstart does not load');
const model: ScenarioModel = loaded.model;

describe('the platform in its own worker thread', () => {
  it("gives a byte-identical result, stored series and event outbox to the platform in the run's thread", async () => {
    const runs = [];
    for (const platformThread of [false, true]) {
      const db = join(dir, `${platformThread}.sqlite`);
      const report = await runScenario(model, { durationMs: 45 * 60_000, platformThread, dbPath: db });
      runs.push({ result: JSON.stringify(report.result), stored: storedRunText(db, model, { hourly: true }) });
    }
    expect(runs[1]?.result).toBe(runs[0]?.result);
    expect(runs[1]?.stored).toBe(runs[0]?.stored);
    expect(JSON.parse(runs[0]?.stored ?? '{}').events.length).toBeGreaterThan(100);
  }, 120_000);

  it('gives the same frame-fidelity result in-thread with no frame workers as in its own thread with 2 frame workers', async () => {
    const a = await runScenario(model, {
      durationMs: 4 * 60_000,
      fidelity: 'frame',
      workers: 0,
      platformThread: false,
    });
    const b = await runScenario(model, { durationMs: 4 * 60_000, fidelity: 'frame', workers: 2, platformThread: true });
    expect(JSON.stringify(b.result)).toBe(JSON.stringify(a.result));
  }, 120_000);

  it('refuses a store holding another run from the thread as it does in-thread (exit code 2 path)', async () => {
    const db = join(dir, 'guard.sqlite');
    await runScenario(model, { durationMs: 10 * 60_000, platformThread: true, dbPath: db });
    await expect(
      runScenario(model, { durationMs: 10 * 60_000, platformThread: true, dbPath: db }),
    ).rejects.toMatchObject({ code: 'USAGE' });
  }, 60_000);
});
