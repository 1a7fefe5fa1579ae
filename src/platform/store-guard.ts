import { createHash } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { SqliteStore } from '../cloud/store/sqlite-store.js';
import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * A store that already holds a run is never silently mixed with another: running the same
 * command twice on one `--db` would count the first run's batches as the second's duplicates
 * and its minutes as the second's. `new` refuses such a store, `fresh` empties it first,
 * `resume` continues it (only the same run: same scenario and seed).
 */
export type StorePolicy = 'new' | 'fresh' | 'resume';

const RUN_KEY = 'run_key';
/** Set by the pipeline once it finalised a minute: a store of an older version that holds data. */
const FINALISED = 'finalised_before';

/** The run's identity as a number the store's state table can hold (48 bits of a hash). */
export function runKeyNumber(runKey: string): number {
  return Number.parseInt(createHash('sha256').update(runKey).digest('hex').slice(0, 12), 16);
}

export function guardStore(dbPath: string, policy: StorePolicy, runKey: string): void {
  if (dbPath === ':memory:') return;
  if (policy === 'fresh') {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
    return claim(dbPath, runKey);
  }
  if (!existsSync(dbPath)) return claim(dbPath, runKey);
  const store = new SqliteStore(dbPath);
  try {
    const held = store.getState(RUN_KEY);
    const holdsRun = held !== undefined || store.getState(FINALISED) !== undefined;
    if (holdsRun && policy === 'new') {
      throw new AppError(ErrorCodes.USAGE, `store ${dbPath} already holds a run: pass --resume to continue that run, or --fresh to delete it and start over`);
    }
    if (held !== undefined && policy === 'resume' && held !== runKeyNumber(runKey)) {
      throw new AppError(ErrorCodes.USAGE, `store ${dbPath} holds a different run (another scenario or seed): --resume continues only the same run; use --fresh to start over`);
    }
    store.setState(RUN_KEY, runKeyNumber(runKey));
  } finally {
    store.close();
  }
}

function claim(dbPath: string, runKey: string): void {
  const store = new SqliteStore(dbPath);
  try {
    store.setState(RUN_KEY, runKeyNumber(runKey));
  } finally {
    store.close();
  }
}
