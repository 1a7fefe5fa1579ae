import { describe, expect, it } from 'vitest';
import { parseStoreLocation } from '../../src/platform/store-location.js';

describe('store locations named like URLs', () => {
  it('reads sqlite:PATH, sqlite:///abs/path and a plain path as a SQLite file', () => {
    expect(parseStoreLocation('sqlite:run.sqlite')).toEqual({ kind: 'sqlite', path: 'run.sqlite' });
    expect(parseStoreLocation('sqlite:///tmp/run.sqlite')).toEqual({ kind: 'sqlite', path: '/tmp/run.sqlite' });
    expect(parseStoreLocation('/tmp/run.sqlite')).toEqual({ kind: 'sqlite', path: '/tmp/run.sqlite' });
    expect(parseStoreLocation('C:run.sqlite')).toEqual({ kind: 'sqlite', path: 'C:run.sqlite' });
  });

  it('refuses another scheme, an empty path and (for now) PostgreSQL with a usage error that hides the password', () => {
    expect(() => parseStoreLocation('mysql://x/y')).toThrow(/sqlite:PATH/);
    expect(() => parseStoreLocation('sqlite:')).toThrow(/needs a file path/);
    expect(() => parseStoreLocation('')).toThrow(/needs a location/);
    try {
      parseStoreLocation('postgres://user:secret@db/occusim');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'USAGE' });
      expect((err as Error).message).not.toContain('secret');
    }
  });
});
