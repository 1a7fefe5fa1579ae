import { isoUtc, MINUTE_MS } from '../core/time.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { leasedStore, openStore } from '../store/open.js';
import { describeLocation } from '../store/location.js';
import type { Flags, Io } from './commands.js';
import { existingStore } from './store-flag.js';

/**
 * `occusim status --store postgres://…`: which ingest process holds which floor partition
 * (docs/scale-out.md, Failover), under which token, until when (the database's clock), and how
 * far behind each partition is: its first minute not yet finalised (`finalised_before j/k`), and
 * the minutes between it and the partition furthest on. `done` once every shard finished and the
 * partition's holder finalised every minute. One line per partition; `--json` for scripts.
 */
export async function statusCommand(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  if (args.length > 0)
    throw new AppError(ErrorCodes.USAGE, 'occusim status takes no positional argument: use --store postgres://…');
  const location = existingStore(flags, 'occusim status');
  const shared = leasedStore(location);
  if (shared === null)
    throw new AppError(
      ErrorCodes.USAGE,
      'occusim status needs a PostgreSQL store (--store postgres://…): partition leases live only there',
    );
  // Opening migrates a store created before the leases (it then has none).
  const store = await openStore(location);
  const leases = await shared.openLeases();
  try {
    const rows = await leases.list();
    const parts = await Promise.all(
      rows.map(async (l) => ({
        ...l,
        finalisedBefore: (await store.getState(`finalised_before ${l.partition}`)) ?? null,
        done: (await store.getState(`shards_done ${l.partition}`)) !== undefined,
      })),
    );
    parts.sort((a, b) => partitionIndex(a.partition) - partitionIndex(b.partition));
    const furthest = Math.max(...parts.map((p) => p.finalisedBefore ?? -Infinity));
    const view = parts.map((p) => ({
      partition: p.partition,
      owner: p.owner,
      token: p.token,
      expiresInMs: p.expiresAtMs - p.nowMs,
      finalisedBefore: p.finalisedBefore === null ? null : isoUtc(p.finalisedBefore),
      behindMinutes:
        p.finalisedBefore === null || !Number.isFinite(furthest) ? null : (furthest - p.finalisedBefore) / MINUTE_MS,
      done: p.done,
    }));
    if (flags.json === true) {
      io.stdout.write(`${JSON.stringify({ store: describeLocation(location), partitions: view }, null, 2)}\n`);
      return 0;
    }
    for (const v of view) {
      const lease =
        v.expiresInMs > 0
          ? `lease ${(v.expiresInMs / 1000).toFixed(1)} s left`
          : `lease expired ${(-v.expiresInMs / 1000).toFixed(1)} s ago`;
      const progress =
        v.finalisedBefore === null
          ? 'nothing finalised yet'
          : `finalised before ${v.finalisedBefore}, ${v.behindMinutes} min behind`;
      io.stdout.write(
        `partition ${v.partition}: ${v.owner} (token ${v.token}), ${lease}; ${progress}${v.done ? '; done' : ''}\n`,
      );
    }
    if (view.length === 0) io.stdout.write(`no partition leases in ${describeLocation(location)}\n`);
    return 0;
  } finally {
    await leases.close();
    await store.close();
  }
}

const partitionIndex = (label: string): number => Number(label.split('/')[0]);
