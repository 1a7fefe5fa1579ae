import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';

const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

// End to end through real worker threads (Piscina), the broker and the store.
describe('runScenario at frame fidelity', () => {
  it('gives a byte-identical result with 1 and 2 workers, and reports detector accuracy', async () => {
    const one = await runScenario(QUICKSTART, { fidelity: 'frame', workers: 1, durationMs: 20 * 60_000 });
    const two = await runScenario(QUICKSTART, { fidelity: 'frame', workers: 2, durationMs: 20 * 60_000 });
    expect(JSON.stringify(two.result)).toBe(JSON.stringify(one.result));
    const d = one.result.detector;
    expect(one.result.scenario.fidelity).toBe('frame');
    expect(d?.presence.sensors).toHaveLength(7);
    expect(d?.presence.overall.samples).toBeGreaterThan(1000);
    expect(d?.presence.overall.exactRate).toBeGreaterThan(0.8);
    expect(d?.traffic.overall.trueCrossings).toBeGreaterThan(0);
    expect(d?.traffic.overall.recall).toBeGreaterThan(0.7);
    expect(one.result.messages.lost).toBe(0);
  });
});
