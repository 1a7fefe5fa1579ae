import { describe, expect, it } from 'vitest';
import { evaluateExpectations, webhookErrorRate } from '../../src/run/expectations.js';
import type { RunResult } from '../../src/run/report.js';
import { parseExpectation, type Expectation } from '../../src/scenario/expectations.js';

const threshold = (text: string): Expectation => {
  const r = parseExpectation(text);
  if (!r.ok) throw new Error(r.message);
  return r.expectation;
};
const sub = (delivered: number, retried: number, deadLettered: number, name = 'wh') => ({
  id: name,
  name,
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

  it('reads a threshold naming one endpoint from that endpoint alone, and the aggregate ones from all', () => {
    const result = { webhooks: [sub(999, 1, 0, 'fast'), sub(90, 10, 0, 'slow one')] } as unknown as RunResult;
    const figures = (name: string, p99: number, perS: number) => ({
      id: name,
      name,
      delivered: 0,
      errorRate: null,
      latencyMs: { p50: 1, p99 },
      deliveredPerWallS: perS,
    });
    const perf = {
      webhookLatencyMs: { p50: 1, p99: 180 },
      webhookEndpoints: [figures('fast', 20, 9_000), figures('slow one', 400, 1_000)],
    };
    const verdicts = evaluateExpectations(
      [
        threshold('webhooks[fast].p99<200ms'),
        threshold('webhooks[slow one].p99<200ms'),
        threshold('webhooks.p99<200ms'),
        threshold('webhooks[slow one].errors<5%'),
        threshold('webhooks[fast].errors<5%'),
        threshold('webhooks.errors<1%'),
        threshold('webhooks[fast].throughput>5000'),
        threshold('webhooks.throughput>=10000'),
        threshold('webhooks[nobody].delivered>0'),
      ],
      result,
      perf,
    );
    expect(verdicts.map((v) => [v.expectation.text, v.measured, v.passed])).toEqual([
      ['webhooks[fast].p99<200ms', 20, true],
      ['webhooks[slow one].p99<200ms', 400, false],
      ['webhooks.p99<200ms', 180, true],
      ['webhooks[slow one].errors<5%', 0.1, false],
      ['webhooks[fast].errors<5%', 0.001, true],
      ['webhooks.errors<1%', 11 / 1100, false],
      ['webhooks[fast].throughput>5000', 9_000, true],
      ['webhooks.throughput>=10000', 10_000, true],
      // An endpoint the run did not have is not measured: the gate fails.
      ['webhooks[nobody].delivered>0', null, false],
    ]);
  });

  it('refuses an endpoint on a metric that is not a webhook one, and a unit on a rate', () => {
    expect(parseExpectation('rooms[x].mae<1').ok).toBe(false);
    const r = parseExpectation('webhooks[x].nope<1');
    expect(r.ok || r.message).toMatch(/unknown metric `webhooks.nope`/);
    const u = parseExpectation('webhooks[x].throughput>5ms');
    expect(u.ok || u.message).toMatch(/a rate \(per second\) takes no unit/);
    expect(threshold('webhooks[a.b].p99<1s')).toMatchObject({ metric: 'webhooks.p99', endpoint: 'a.b', value: 1000 });
  });
});
