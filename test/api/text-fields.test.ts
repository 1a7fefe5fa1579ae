import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { descriptionProblem, MAX_NAME_CHARS, nameProblem } from '../../src/api/text-fields.js';

const SEED = 1616;

describe('text fields', () => {
  it(`accepts every name of printable, non-bidi characters up to ${MAX_NAME_CHARS} (seed ${SEED})`, () => {
    const printable = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
      .filter(
        (s) =>
          s.trim() !== '' &&
          s.length <= MAX_NAME_CHARS &&
          !/[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u.test(s),
      );
    fc.assert(
      fc.property(printable, (s) => nameProblem(s) === null),
      { seed: SEED, numRuns: 500 },
    );
  });

  it(`refuses any name holding a control or bidi character wherever it sits (seed ${SEED})`, () => {
    const bad = fc.constantFrom(
      '\u0000',
      '\u0007',
      '\n',
      '\u001b',
      '\u007f',
      '\u0085',
      '\u061C',
      '\u200F',
      '\u202A',
      '\u202E',
      '\u2066',
      '\u2069',
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), bad, fc.string({ maxLength: 20 }), (a, ch, b) => {
        const problem = nameProblem(`x${a}${ch}${b}`);
        return problem !== null && problem.includes('position');
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('lets descriptions hold line breaks and tabs, not other controls', () => {
    expect(descriptionProblem('a\r\n\tb')).toBeNull();
    expect(descriptionProblem('a\u0000')).toMatch(/U\+0000 at position 1/);
    expect(descriptionProblem('y'.repeat(1001))).toMatch(/at most 1000/);
  });
});
