import { createHash } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import type { Store } from './port.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { describeLocation, inMemory, type StoreLocation } from './location.js';

/**
 * A store that already holds a run is never silently mixed with another: running the same
 * command twice on one `--db` would count the first run's batches as the second's duplicates
 * and its minutes as the second's. `new` refuses such a store, `fresh` empties it first,
 * `resume` continues it (only the same run: same scenario and seed).
 */
export type StorePolicy = 'new' | 'fresh' | 'resume';

const RUN_KEY = 'run_key';
/**
 * Set by a run that re-simulates from its start (`occusim run`): its simulated end, or the end
 * of the last batch interval it completed when stopped early. What the store receives from
 * then on is the end-of-run drain (the hives' buffers and the mesh
 * emptied), whose batches hold only packets sensed before the end: the same seqs of a longer
 * run hold those and the packets sensed after, so they are not the same batches.
 */
const DRAIN_FROM = 'drain_from_ms';
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

/**
 * Checks the store against the policy and marks it as the run's. `runEndMs`: the simulated end
 * of a run that sends everything again from its start (absent for `serve`). Resuming such a
 * run forgets what the store received in the previous run's end-of-run drain (those batches
 * are resent, with the packets sensed after that end) instead of refusing the resent ones as
 * duplicates, so a stopped and resumed run stores what an uninterrupted one stores.
 */
export async function guardStore(
  target: GuardedStore,
  policy: StorePolicy,
  runKey: string,
  runEndMs: number | null = null,
): Promise<void> {
  const { location } = target;
  if (inMemory(location)) return;
  const name = describeLocation(location);
  if (policy === 'fresh') await target.clear();
  else if (location.kind === 'sqlite' && !existsSync(location.path)) policy = 'fresh';
  const store = await target.open();
  try {
    if (policy !== 'fresh') {
      const held = await store.getState(RUN_KEY);
      const holdsRun = held !== undefined || (await store.getState(FINALISED)) !== undefined;
      if (holdsRun && policy === 'new') {
        throw new AppError(
          ErrorCodes.USAGE,
          `store ${name} already holds a run: pass --resume to continue that run, or --fresh to delete it and start over`,
        );
      }
      if (held !== undefined && policy === 'resume' && held !== runKeyNumber(runKey)) {
        throw new AppError(
          ErrorCodes.USAGE,
          `store ${name} holds a different run (another scenario or seed): --resume continues only the same run; use --fresh to start over`,
        );
      }
    }
    if (policy === 'resume' && runEndMs !== null) {
      const drainFrom = await store.getState(DRAIN_FROM);
      if (drainFrom !== undefined) await store.forgetReceivedFrom(drainFrom);
    }
    await store.setState(RUN_KEY, runKeyNumber(runKey));
    if (runEndMs !== null) await store.setState(DRAIN_FROM, runEndMs);
  } finally {
    await store.close();
  }
}

/**
 * A run stopped before its planned end (Ctrl-C): what the store receives from `stoppedAtMs` on
 * (the end of its last whole batch interval) is its end-of-run drain; a resumed run forgets from there.
 */
export async function markDrainFrom(store: Store, stoppedAtMs: number): Promise<void> {
  await store.setState(DRAIN_FROM, stoppedAtMs);
}

/** `--fresh` of a SQLite store: its file and the WAL's companions. */
export function removeSqliteFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}
