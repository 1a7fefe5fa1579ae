import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresLeases } from '../../src/store/postgres-leases.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { isAppError } from '../../src/core/errors.js';
import { postgresPerFile } from '../support/postgres-per-file.js';

/**
 * Partition leases and fencing on a real PostgreSQL (docs/scale-out.md, Failover): one holder at
 * a time, a takeover only of an expired lease, and an aggregation write under a taken token
 * refused with nothing committed, while storing stays unfenced.
 */
const { skip, createDatabase } = postgresPerFile();

async function value(url: string, key: string): Promise<number | null> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ value: number }>('SELECT value FROM pipeline_state WHERE key = $1', [key]);
    return r.rows[0] ? Number(r.rows[0].value) : null;
  } finally {
    await c.end();
  }
}

describe.skipIf(skip)('partition leases with fencing tokens (PostgreSQL)', () => {
  it('lets one process hold a partition; another takes it only once expired, and the old holder’s writes are refused', async () => {
    const url = await createDatabase();
    await (await PostgresStore.open(url)).close();
    const leases = await PostgresLeases.open(url);
    try {
      const a = await leases.acquire('1/2', 'a', 60_000, true);
      expect(a).toBe(1);
      // Held and not expired: nobody else takes it, created or not.
      expect(await leases.acquire('1/2', 'b', 60_000, true)).toBeNull();
      expect(await leases.renew('1/2', 'a', 1, 1_000)).toBe(true);
      const fencedA = await PostgresStore.open(url, { fence: { partition: '1/2', token: 1 } });
      await fencedA.setState('finalised_before 1/2', 100);
      expect(await value(url, 'finalised_before 1/2')).toBe(100);
      // The lease runs out (a stopped holder): b takes it with the next token.
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await leases.acquire('1/2', 'b', 60_000, false)).toBe(2);
      await expect(fencedA.setState('finalised_before 1/2', 200)).rejects.toSatisfy((e: unknown) =>
        isAppError(e, 'LEASE_LOST'),
      );
      await expect(
        fencedA.writePresenceMinutes([{ spaceId: 'room_x', minuteMs: 0, value: 1, samples: 1 }]),
      ).rejects.toSatisfy((e: unknown) => isAppError(e, 'LEASE_LOST'));
      // Nothing of the refused writes committed; the holder's own renewal fails too.
      expect(await value(url, 'finalised_before 1/2')).toBe(100);
      expect(await fencedA.presenceMinutes('room_x')).toEqual([]);
      expect(await leases.renew('1/2', 'a', 1, 60_000)).toBe(false);
      // Storing stays anyone's (idempotent by hive and seq): a stale holder's reads and marks go through.
      await fencedA.markReopen([{ owner: '1/2', floorId: 'floor_x', minuteMs: 0 }]);
      await fencedA.close();
      const fencedB = await PostgresStore.open(url, { fence: { partition: '1/2', token: 2 } });
      await fencedB.setState('finalised_before 1/2', 300);
      expect(await value(url, 'finalised_before 1/2')).toBe(300);
      await fencedB.close();
      // A clean stop lets the lease go at once: a did not wait out b's minute.
      await leases.release('1/2', 'b', 2);
      expect(await leases.acquire('1/2', 'a', 60_000, false)).toBe(3);
      expect((await leases.list()).map((l) => [l.partition, l.owner, l.token])).toEqual([['1/2', 'a', 3]]);
    } finally {
      await leases.close();
    }
  }, 30_000);

  it('creates a partition nobody held only when asked to (a process’s own, or after a lease of uptime)', async () => {
    const url = await createDatabase();
    await (await PostgresStore.open(url)).close();
    const leases = await PostgresLeases.open(url);
    try {
      expect(await leases.acquire('2/2', 'a', 60_000, false)).toBeNull();
      expect(await leases.list()).toEqual([]);
      expect(await leases.acquire('2/2', 'a', 60_000, true)).toBe(1);
    } finally {
      await leases.close();
    }
  });
});
