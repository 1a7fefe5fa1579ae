import { beforeAll, describe, expect, it } from 'vitest';
import { thresholdsInvariant } from '../../src/explore/invariants.js';
import type { RunResult } from '../../src/run/report.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { parseExpectation, type Expectation } from '../../src/scenario/expectations.js';

const expectation = (text: string): Expectation => {
  const r = parseExpectation(text);
  if (!r.ok) throw new Error(r.message);
  return r.expectation;
};

describe('explore invariants', () => {
  let run: RunResult;
  beforeAll(async () => {
    run = (await runScenario('scenarios/quickstart.yaml', { durationMs: 5 * 60_000, keepStore: false })).result;
  }, 60_000);

  it('--expect thresholds hold or are violated with the measured value, as run --expect judges them', () => {
    const inv = thresholdsInvariant([
      expectation('messages.lost==0'),
      expectation('messages.delivered<1'),
      expectation('webhooks.delivered>=1'),
    ]);
    expect(inv.name).toBe('expect');
    expect(inv.check(run, [], run)).toEqual([
      `messages.delivered<1: measured ${run.messages.packetsDelivered}`,
      'webhooks.delivered>=1: measured not measured',
    ]);
    expect(thresholdsInvariant([expectation('rooms.mae<5')]).check(run, [], run)).toEqual([]);
  });
});
