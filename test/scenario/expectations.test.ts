import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXPECT_METRICS, holds, parseExpectation } from '../../src/scenario/expectations.js';
import { loadScenarioText } from '../../src/scenario/load.js';

const quickstart = readFileSync(new URL('../../scenarios/quickstart.yaml', import.meta.url), 'utf8');

describe('threshold grammar', () => {
  it('reads metric, operator and value, in the metric\u2019s base unit', () => {
    expect(parseExpectation('rooms.mae<0.5')).toEqual({
      ok: true,
      expectation: { text: 'rooms.mae<0.5', metric: 'rooms.mae', op: '<', value: 0.5 },
    });
    expect(parseExpectation(' latency.p99 < 15s ')).toMatchObject({
      ok: true,
      expectation: { text: 'latency.p99 < 15s', value: 15_000 },
    });
    expect(parseExpectation('latency.max<=2m')).toMatchObject({ expectation: { op: '<=', value: 120_000 } });
    expect(parseExpectation('latency.p50<800')).toMatchObject({ expectation: { value: 800 } });
    expect(parseExpectation('traffic.recall>=90%')).toMatchObject({ expectation: { op: '>=', value: 0.9 } });
    expect(parseExpectation('traffic.recall>=0.9')).toMatchObject({ expectation: { value: 0.9 } });
    expect(parseExpectation('messages.lost==0')).toMatchObject({ expectation: { op: '==', value: 0 } });
    expect(parseExpectation('webhooks.lost==0')).toMatchObject({ ok: true });
    expect(parseExpectation('deadletters!=3')).toMatchObject({ expectation: { op: '!=', value: 3 } });
  });

  it('says what is wrong: shape, unknown metric with a suggestion, unit', () => {
    expect(parseExpectation('rooms.mae')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/write METRIC OP VALUE/),
    });
    expect(parseExpectation('rooms.mea<1')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/unknown metric `rooms.mea`; did you mean `rooms.mae`/),
    });
    expect(parseExpectation('traffic.recall>=2')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/0\.\.1/),
    });
    expect(parseExpectation('messages.lost<1s')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/takes no unit/),
    });
    expect(parseExpectation('latency.p99<5%')).toMatchObject({ ok: false });
    expect(parseExpectation(`rooms.mae<${'9'.repeat(300)}`)).toMatchObject({ ok: false });
  });

  it('compares as the operator says (property, seed 15)', () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        (a, b) => {
          expect(holds('<', a, b)).toBe(!holds('>=', a, b));
          expect(holds('>', a, b)).toBe(!holds('<=', a, b));
          expect(holds('==', a, b)).toBe(!holds('!=', a, b));
        },
      ),
      { seed: 15 },
    );
  });

  it('every metric name parses', () => {
    for (const name of Object.keys(EXPECT_METRICS)) expect(parseExpectation(`${name}>=0`).ok, name).toBe(true);
  });
});

describe('expect: in a scenario file', () => {
  it('loads thresholds into the model', () => {
    const r = loadScenarioText(`${quickstart}\nexpect:\n  - rooms.mae < 0.5\n  - latency.p99 < 15s\n`, 'q.yaml');
    expect(r.ok && r.model.expect?.map((e) => [e.metric, e.value])).toEqual([
      ['rooms.mae', 0.5],
      ['latency.p99', 15_000],
    ]);
  });

  it('reports a bad threshold at its line, with a suggestion', () => {
    const text = `${quickstart}\nexpect:\n  - rooms.mae < 0.5\n  - trafic.recall >= 0.9\n`;
    const r = loadScenarioText(text, 'q.yaml');
    expect(r.ok).toBe(false);
    const line = text.split('\n').findIndex((l) => l.includes('trafic.recall')) + 1;
    const d = !r.ok ? r.diagnostics.find((x) => x.path === 'expect[1]') : undefined;
    expect(d).toMatchObject({ line, message: expect.stringMatching(/did you mean `traffic.recall`/) });
  });
});
