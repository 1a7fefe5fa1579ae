import { AppError, ErrorCodes } from '../core/errors.js';
import { parseStoreLocation } from '../platform/store-location.js';
import type { Flags } from './io.js';

/**
 * `--store sqlite:FILE`, `--store postgres://…` or `--db FILE` (an alias of `--store sqlite:FILE`):
 * the store's file path or PostgreSQL URL (the platform's `dbPath` names either), or null for a temporary file.
 */
export function storeFlag(flags: Flags): string | null {
  if (typeof flags.store === 'string' && typeof flags.db === 'string') throw new AppError(ErrorCodes.USAGE, '--store and --db name the same thing: give one');
  if (typeof flags.store === 'string') {
    const location = parseStoreLocation(flags.store);
    return location.kind === 'sqlite' ? location.path : location.url;
  }
  return typeof flags.db === 'string' ? flags.db : null;
}
