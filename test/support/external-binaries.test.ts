import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findBinary, underCi } from './external-binaries.js';

describe('external binaries for tests', () => {
  it('finds an executable on PATH and nothing elsewhere', () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-bin-'));
    writeFileSync(join(dir, 'fake-broker'), '#!/bin/sh\n');
    chmodSync(join(dir, 'fake-broker'), 0o755);
    writeFileSync(join(dir, 'not-executable'), '');
    expect(findBinary('fake-broker', `/nonexistent:${dir}`)).toBe(join(dir, 'fake-broker'));
    expect(findBinary('not-executable', dir)).toBeNull();
    expect(findBinary('fake-broker', '/nonexistent')).toBeNull();
  });

  it('takes CI=true and CI=1 as CI, anything else as a developer machine', () => {
    expect(underCi({ CI: 'true' })).toBe(true);
    expect(underCi({ CI: '1' })).toBe(true);
    expect(underCi({ CI: 'false' })).toBe(false);
    expect(underCi({})).toBe(false);
  });
});
