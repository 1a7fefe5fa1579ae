import { describe, expect, it } from 'vitest';
import { describeStore, parseStoreLocation } from '../../src/store/location.js';

describe('store locations named like URLs', () => {
  it('reads sqlite:PATH, sqlite:///abs/path and a plain path as a SQLite file', () => {
    expect(parseStoreLocation('sqlite:run.sqlite')).toEqual({ kind: 'sqlite', path: 'run.sqlite' });
    expect(parseStoreLocation('sqlite:///tmp/run.sqlite')).toEqual({ kind: 'sqlite', path: '/tmp/run.sqlite' });
    expect(parseStoreLocation('/tmp/run.sqlite')).toEqual({ kind: 'sqlite', path: '/tmp/run.sqlite' });
    expect(parseStoreLocation('C:run.sqlite')).toEqual({ kind: 'sqlite', path: 'C:run.sqlite' });
  });

  it('refuses another scheme and an empty path with a usage error', () => {
    expect(() => parseStoreLocation('mysql://x/y')).toThrow(/sqlite:PATH/);
    expect(() => parseStoreLocation('sqlite:')).toThrow(/needs a file path/);
    expect(() => parseStoreLocation('')).toThrow(/needs a location/);
  });

  it('reads postgres:// and postgresql:// URLs as a PostgreSQL database, and refuses one without a database, hiding the password', () => {
    expect(parseStoreLocation('postgres://user:secret@db:5433/occusim')).toEqual({
      kind: 'postgres',
      url: 'postgres://user:secret@db:5433/occusim',
    });
    expect(parseStoreLocation('postgresql://db/occusim')).toEqual({ kind: 'postgres', url: 'postgresql://db/occusim' });
    try {
      parseStoreLocation('postgres://user:secret@db');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'USAGE' });
      expect((err as Error).message).toMatch(/name the database/);
      expect((err as Error).message).not.toContain('secret');
    }
    expect(describeStore('postgres://user:secret@db/occusim')).toBe('postgres://user@db/occusim');
    expect(describeStore('/tmp/run.sqlite')).toBe('/tmp/run.sqlite');
  });
});
