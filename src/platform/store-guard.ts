import { createHash } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import type { Store } from '../cloud/store/port.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { describeStore, type StoreLocation } from './store-location.js';

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

/** What the guard needs of the store at the location (opened only when the guard needs it). */
export interface GuardedStore {
  location: StoreLocation;
  open(): Promise<Store>;
  /** `--fresh`: deletes everything the store holds (the SQLite file; the PostgreSQL tables' rows). */
  clear(): Promise<void>;
}

export async function guardStore(target: GuardedStore, policy: StorePolicy, runKey: string): Promise<void> {
  const { location } = target;
  if (location.kind === 'sqlite' && location.path === ':memory:') return;
  const name = describeStore(location.kind === 'sqlite' ? location.path : location.url);
  if (policy === 'fresh') await target.clear();
  else if (location.kind === 'sqlite' && !existsSync(location.path)) policy = 'fresh';
  const store = await target.open();
  try {
    if (policy !== 'fresh') {
      const held = await store.getState(RUN_KEY);
      const holdsRun = held !== undefined || (await store.getState(FINALISED)) !== undefined;
      if (holdsRun && policy === 'new') {
        throw new AppError(ErrorCodes.USAGE, `store ${name} already holds a run: pass --resume to continue that run, or --fresh to delete it and start over`);
      }
      if (held !== undefined && policy === 'resume' && held !== runKeyNumber(runKey)) {
        throw new AppError(ErrorCodes.USAGE, `store ${name} holds a different run (another scenario or seed): --resume continues only the same run; use --fresh to start over`);
      }
    }
    await store.setState(RUN_KEY, runKeyNumber(runKey));
  } finally {
    await store.close();
  }
}

/** `--fresh` of a SQLite store: its file and the WAL's companions. */
export function removeSqliteFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}
