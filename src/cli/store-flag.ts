import { existsSync } from 'node:fs';
import { AppError, ErrorCodes } from '../core/errors.js';
import { parseStoreLocation, type StoreLocation } from '../store/location.js';
import type { Flags } from './io.js';

/**
 * `--store sqlite:FILE`, `--store postgres://…` or `--db FILE` (an alias of `--store sqlite:FILE`),
 * parsed once into the location every part takes; null for a temporary file.
 */
export function storeFlag(flags: Flags): StoreLocation | null {
  if (typeof flags.store === 'string' && typeof flags.db === 'string')
    throw new AppError(ErrorCodes.USAGE, '--store and --db name the same thing: give one');
  if (typeof flags.store === 'string') return parseStoreLocation(flags.store);
  return typeof flags.db === 'string' ? parseStoreLocation(flags.db) : null;
}

/**
 * The store a command reads or changes in place (`deadletters`, `webhooks replay|deadletters`):
 * `--store sqlite:FILE`, `--store postgres://…` or `--db FILE`, required; a SQLite file must
 * exist (a mistyped path is not created as an empty store).
 */
export function existingStore(flags: Flags, command: string): StoreLocation {
  const location = storeFlag(flags);
  if (location === null)
    throw new AppError(
      ErrorCodes.USAGE,
      `${command} needs --store sqlite:FILE|postgres://… (or --db FILE): the store \`occusim run\` or \`occusim serve\` wrote`,
    );
  if (location.kind === 'sqlite' && !existsSync(location.path))
    throw new AppError(ErrorCodes.USAGE, `no store at ${location.path}`);
  return location;
}
