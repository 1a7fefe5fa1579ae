import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_EXPANDED_ITEMS } from '../../src/scenario/expand.js';
import { report } from '../adversarial/budget.js';

/**
 * The cost of loading a sensor grid just under the expansion bound (issue 33 item 13: a
 * 499 × 500 grid validated in 27 s to 1.77 GB). Measured in a process of its own (the built
 * loader), so CPU time and peak RSS are the load's alone: the paths and origins of a grid's
 * items are shared, the vertex budget's walk allocates no path per node, ids hash one-shot.
 * Measured after the fix on a loaded 2-core machine: ~8 s CPU and ~480 MB peak RSS, with
 * Node's own start-up (~1.5 s, ~80 MB) included; 250 × 250: 3.2 s, 230 MB (linear).
 */
const CPU_BOUND_MS = 16_000;
const RSS_BOUND_MB = 900;
const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'occusim-grid-cost-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const grid = (nx: number, ny: number): string => `version: 1
name: big-grid
start: "2026-03-02T08:00"
duration: 1h
organization: { name: Acme }
sites:
  - name: HQ
    timezone: Europe/Paris
    buildings:
      - name: Main
        floors:
          - name: Ground
            level: 0
            rooms:
              - { name: Hall, polygon: [[0, 0], [1000, 0], [1000, 1000], [0, 1000]] }
            hives:
              - { name: Hive 1, position: [500, 500] }
            sensors:
              - { name: S, mode: presence, room: Hall, center: [1, 1], height: 3.0, grid: { count: [${nx}, ${ny}], step: [2, 2] } }
`;

/** Loads the file with the built loader in a fresh process: its CPU time, peak RSS and sensor count. */
async function load(file: string): Promise<{ cpuMs: number; maxRssMb: number; ok: boolean; sensors: number }> {
  const script = `
    const { loadScenarioFile } = await import(${JSON.stringify(join(root, 'dist/scenario/load.js'))});
    const r = loadScenarioFile(${JSON.stringify(file)});
    const u = process.resourceUsage();
    console.log(JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssMb: u.maxRSS / 1024, ok: r.ok, sensors: r.ok ? r.model.sensors.length : 0 }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').pop() as string) as {
    cpuMs: number;
    maxRssMb: number;
    ok: boolean;
    sensors: number;
  };
}

describe('the cost of a grid just under the expansion bound', () => {
  it(`loads a 499 × 500 sensor grid (${499 * 500} of ${MAX_EXPANDED_ITEMS} items) within ${CPU_BOUND_MS / 1000} s of CPU and ${RSS_BOUND_MB} MB`, async () => {
    const file = join(dir, 'grid.yaml');
    writeFileSync(file, grid(499, 500));
    const r = await load(file);
    report('499 × 500 grid', { cpuMs: r.cpuMs, maxRssMb: r.maxRssMb, sensors: r.sensors });
    expect(r).toMatchObject({ ok: true, sensors: 499 * 500 });
    expect(r.cpuMs).toBeLessThan(CPU_BOUND_MS);
    expect(r.maxRssMb).toBeLessThan(RSS_BOUND_MB);
  }, 120_000);
});
