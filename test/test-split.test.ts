import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERIAL_TESTS, SLOW_TESTS } from '../vitest.config.js';

const root = resolve(new URL('..', import.meta.url).pathname);

describe('the fast/slow split of the test files (vitest.config.ts)', () => {
  it('names only files that exist: a renamed slow file would otherwise move to npm test unnoticed', () => {
    const missing = SLOW_TESTS.filter((p) => !p.includes('*') && !existsSync(resolve(root, p)));
    expect(missing).toEqual([]);
  });

  it('lists each slow file once', () => {
    expect(new Set(SLOW_TESTS).size).toBe(SLOW_TESTS.length);
  });

  it('runs serially only slow files that exist, each once: a serial file left out of the slow list would run twice', () => {
    expect(SERIAL_TESTS.filter((p) => !existsSync(resolve(root, p)))).toEqual([]);
    expect(new Set(SERIAL_TESTS).size).toBe(SERIAL_TESTS.length);
    const slow = (p: string): boolean => SLOW_TESTS.includes(p) || p.endsWith('.slow.test.ts');
    expect(SERIAL_TESTS.filter((p) => !slow(p))).toEqual([]);
  });
});
