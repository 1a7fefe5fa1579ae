import { existsSync } from 'node:fs';
import { SqliteStore } from '../cloud/store/sqlite-store.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { isoUtc } from '../core/time.js';
import type { Flags, Io } from './commands.js';

/**
 * `occusim deadletters --db <store.sqlite>`: every dead-lettered message or packet of a
 * cloud store, oldest first, one per line: received time (UTC), reason code, topic, message
 * (docs/occupancy.md, Ingest). Exit 0 (also when there are none).
 */
export function deadlettersCommand(args: readonly string[], flags: Flags, io: Io): number {
  if (args.length > 0) throw new AppError(ErrorCodes.USAGE, 'occusim deadletters takes no positional argument: use --db <store.sqlite>');
  const db = flags.db;
  if (typeof db !== 'string') throw new AppError(ErrorCodes.USAGE, 'occusim deadletters needs --db <store.sqlite> (the file `occusim run --db` wrote)');
  if (!existsSync(db)) throw new AppError(ErrorCodes.USAGE, `no store at ${db}`);
  const store = new SqliteStore(db);
  try {
    const letters = store.deadLetters();
    for (const d of letters) io.stdout.write(`${isoUtc(d.receivedAtMs)}  ${d.reason.padEnd(20)}  ${d.topic}  ${d.message}\n`);
    io.stderr.write(`${letters.length} dead letter(s) in ${db}\n`);
    return 0;
  } finally {
    store.close();
  }
}
