import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * Where the platform's store lives, named like a URL (`--store`): `sqlite:PATH` (or a plain
 * path, as `--db` takes it). Only SQLite has an adapter today; a `postgres://` store is
 * refused with a clear message until its adapter exists.
 */
export interface StoreLocation {
  kind: 'sqlite';
  path: string;
}

export function parseStoreLocation(text: string): StoreLocation {
  if (text.startsWith('postgres://') || text.startsWith('postgresql://')) {
    throw new AppError(ErrorCodes.USAGE, `--store ${JSON.stringify(text.replace(/\/\/[^@/]*@/, '//…@'))}: the PostgreSQL store is not available yet; use sqlite:PATH`);
  }
  const m = /^([a-z][a-z0-9+.-]*):(.*)$/i.exec(text);
  if (m && m[1] !== undefined && m[1].length > 1) {
    if (m[1].toLowerCase() !== 'sqlite') throw new AppError(ErrorCodes.USAGE, `--store must be sqlite:PATH (or a file path), got the scheme ${JSON.stringify(m[1])}`);
    const path = (m[2] ?? '').replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new AppError(ErrorCodes.USAGE, '--store sqlite: needs a file path, e.g. sqlite:run.sqlite');
    return { kind: 'sqlite', path };
  }
  if (text === '') throw new AppError(ErrorCodes.USAGE, '--store needs a location, e.g. sqlite:run.sqlite');
  return { kind: 'sqlite', path: text };
}
