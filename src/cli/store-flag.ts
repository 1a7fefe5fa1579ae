import { AppError, ErrorCodes } from '../core/errors.js';
import { parseStoreLocation } from '../platform/store-location.js';
import type { Flags } from './io.js';

/** `--store sqlite:FILE` or its alias `--db FILE`: the store's file, or null for a temporary one. */
export function storeFlag(flags: Flags): string | null {
  if (typeof flags.store === 'string' && typeof flags.db === 'string') throw new AppError(ErrorCodes.USAGE, '--store and --db name the same thing: give one');
  if (typeof flags.store === 'string') return parseStoreLocation(flags.store).path;
  return typeof flags.db === 'string' ? flags.db : null;
}
