import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLOW_TESTS } from '../vitest.config.js';

const root = resolve(new URL('..', import.meta.url).pathname);

describe('the fast/slow split of the test files (vitest.config.ts)', () => {
  it('names only files that exist: a renamed slow file would otherwise move to npm test unnoticed', () => {
    const missing = SLOW_TESTS.filter((p) => !p.includes('*') && !existsSync(resolve(root, p)));
    expect(missing).toEqual([]);
  });

  it('lists each slow file once', () => {
    expect(new Set(SLOW_TESTS).size).toBe(SLOW_TESTS.length);
  });
});
