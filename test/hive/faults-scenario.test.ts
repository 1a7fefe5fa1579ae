import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkCapture } from '../../src/capture/check.js';
import { readCapture } from '../../src/capture/format.js';
import { runScenario } from '../../src/run/run-scenario.js';

const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

describe('sensor-offline and hive-reboot faults on the quickstart office', () => {
  it('suppresses the offline sensor, holds the mesh through the reboot, loses nothing and records a conformant capture', async () => {
    const doc = parse(readFileSync(QUICKSTART, 'utf8')) as Record<string, unknown>;
    const scenario = {
      ...doc,
      duration: '20m',
      faults: [
        { kind: 'sensor_offline', sensors: ['Kitchen'], at: '3m', duration: '4m' },
        { kind: 'hive_reboot', hive: 'Hive 1', at: '10m', duration: '2m' },
      ],
    };
    const capture = join(mkdtempSync(join(tmpdir(), 'occusim-faults-')), 'f.occap');
    const r = (await runScenario(scenario, { record: capture })).result;
    const d = r.delivery!;
    expect(d.overall.offlineSuppressed).toBe(4 * 60); // one presence packet a second
    expect(r.messages.lost).toBe(0);
    expect(d.overall.lost).toBe(0);
    // Frames sensed during the reboot waited in the mesh: latency of at least its length.
    expect(d.overall.latencyMs.max).toBeGreaterThan(2 * 60_000);
    const { header, messages } = readCapture(capture);
    expect(checkCapture(header, messages).violations).toEqual([]);
  });
});
