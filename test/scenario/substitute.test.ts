import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { substitute } from '../../src/scenario/substitute.js';

const vars = new Map([
  ['i', 3],
  ['floor', 2],
]);

describe('substitute', () => {
  it('replaces variables and one-integer arithmetic inside text', () => {
    expect(substitute('Room ${i}-${i+1}-${floor*10}-${i-1}-${i/2}-${i%2}', vars)).toEqual({
      ok: true,
      value: 'Room 3-4-20-2-1-1',
    });
  });

  it('turns a string that is exactly one expression into a number', () => {
    expect(substitute('${floor+1}', vars)).toEqual({ ok: true, value: 3 });
  });

  it('zero-pads when asked, keeping the result a string', () => {
    expect(substitute('${i+1:03}', vars)).toEqual({ ok: true, value: '004' });
  });

  it('names the unknown variable and the ones that exist', () => {
    expect(substitute('S${j}', vars)).toEqual({
      ok: false,
      message: 'unknown variable `j` (defined here: i, floor) in `${j}`',
    });
  });

  it('rejects expressions outside the small grammar', () => {
    expect(substitute('${i+j}', vars).ok).toBe(false);
    expect(substitute('${i/0}', vars).ok).toBe(false);
  });

  it('leaves text without expressions untouched (property, seed 42)', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes('${')),
        (s) => {
          expect(substitute(s, vars)).toEqual({ ok: true, value: s });
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });

  it('${k+n} is k + n for every index and integer (property, seed 42)', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), (k, n) => {
        expect(substitute(`x${'${k+'}${n}}`, new Map([['k', k]]))).toEqual({ ok: true, value: `x${k + n}` });
      }),
      { seed: 42, numRuns: 200 },
    );
  });
});
