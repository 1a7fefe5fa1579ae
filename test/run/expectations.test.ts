import { describe, expect, it } from 'vitest';
import { evaluateExpectations, webhookErrorRate } from '../../src/run/expectations.js';
import type { RunResult } from '../../src/run/report.js';
import { parseExpectation, type Expectation } from '../../src/scenario/expectations.js';

const threshold = (text: string): Expectation => {
  const r = parseExpectation(text);
  if (!r.ok) throw new Error(r.message);
  return r.expectation;
};
const sub = (delivered: number, retried: number, deadLettered: number) => ({
  id: 'wh',
  name: 'wh',
  delivered,
  retried,
  deadLettered,
  disabled: 0,
  pending: 0,
});

describe('webhook thresholds', () => {
  it('reads the error rate as failed attempts over all attempts, every endpoint', () => {
    expect(webhookErrorRate({ webhooks: [sub(90, 8, 2), sub(100, 0, 0)] })).toBeCloseTo(10 / 200);
    expect(webhookErrorRate({ webhooks: [] })).toBeNull();
    expect(webhookErrorRate({})).toBeNull();
  });

  it('judges webhooks.errors against the result and webhooks.p99 against the wall-time latency, failing when not measured', () => {
    const result = { webhooks: [sub(999, 1, 0)] } as unknown as RunResult;
    const verdicts = evaluateExpectations(
      [
        threshold('webhooks.errors<0.1%'),
        threshold('webhooks.errors<1%'),
        threshold('webhooks.p99<200ms'),
        threshold('webhooks.p50<5ms'),
      ],
      result,
      { webhookLatencyMs: { p50: 4, p99: 250 } },
    );
    expect(verdicts.map((v) => [v.expectation.text, v.measured, v.passed])).toEqual([
      ['webhooks.errors<0.1%', 0.001, false],
      ['webhooks.errors<1%', 0.001, true],
      ['webhooks.p99<200ms', 250, false],
      ['webhooks.p50<5ms', 4, true],
    ]);
    expect(evaluateExpectations([threshold('webhooks.p99<200ms')], result)[0]).toMatchObject({
      measured: null,
      passed: false,
    });
  });
});
