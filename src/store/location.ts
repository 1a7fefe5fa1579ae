import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * Where the platform's store lives, named like a URL (`--store`): `sqlite:PATH` (or a plain
 * path, as `--db` takes it), or `postgres://user:password@host:port/database` (also
 * `postgresql://`), a PostgreSQL database that several platform processes may share.
 */
export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

const isPostgres = (text: string): boolean => /^postgres(ql)?:\/\//i.test(text);

export function parseStoreLocation(text: string): StoreLocation {
  if (isPostgres(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new AppError(
        ErrorCodes.USAGE,
        `--store ${JSON.stringify(describeStore(text))}: not a valid postgres:// URL`,
      );
    }
    if (url.pathname.length <= 1 && !url.searchParams.has('host'))
      throw new AppError(
        ErrorCodes.USAGE,
        `--store ${JSON.stringify(describeStore(text))}: name the database, e.g. postgres://user@localhost:5432/occusim`,
      );
    return { kind: 'postgres', url: text };
  }
  const m = /^([a-z][a-z0-9+.-]*):(.*)$/i.exec(text);
  if (m && m[1] !== undefined && m[1].length > 1) {
    if (m[1].toLowerCase() !== 'sqlite')
      throw new AppError(
        ErrorCodes.USAGE,
        `--store must be sqlite:PATH, postgres://… or a file path, got the scheme ${JSON.stringify(m[1])}`,
      );
    const path = (m[2] ?? '').replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new AppError(ErrorCodes.USAGE, '--store sqlite: needs a file path, e.g. sqlite:run.sqlite');
    return { kind: 'sqlite', path };
  }
  if (text === '') throw new AppError(ErrorCodes.USAGE, '--store needs a location, e.g. sqlite:run.sqlite');
  return { kind: 'sqlite', path: text };
}

/** The location as it may be printed: a PostgreSQL URL without its password. */
export function describeStore(text: string): string {
  return isPostgres(text) ? text.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@') : text;
}

/** The file path or URL a location names, as an adapter opens it. */
export const locationText = (location: StoreLocation): string =>
  location.kind === 'sqlite' ? location.path : location.url;

/** A parsed location as it may be printed (a PostgreSQL URL without its password). */
export function describeLocation(location: StoreLocation): string {
  return describeStore(locationText(location));
}

/** A SQLite store in memory: nothing outlives its connection (no run to guard, none to reopen). */
export const inMemory = (location: StoreLocation): boolean =>
  location.kind === 'sqlite' && location.path === ':memory:';
