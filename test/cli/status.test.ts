import { describe, expect, it } from 'vitest';
import { PostgresLeases } from '../../src/store/postgres-leases.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { postgresPerFile } from '../support/postgres-per-file.js';
import { cli } from './fixtures/run-cli.js';

/** `occusim status --store postgres://…`: each partition's holder, token, lease and how far behind it is (docs/scale-out.md, Failover). */
const { skip, createDatabase } = postgresPerFile();

describe.skipIf(skip)('occusim status', () => {
  it('prints who holds each partition, its lease, its horizon and the minutes it is behind the furthest', async () => {
    const url = await createDatabase();
    const store = await PostgresStore.open(url);
    const leases = await PostgresLeases.open(url);
    try {
      expect(await leases.acquire('1/2', 'host-a:11:aa', 60_000, true)).toBe(1);
      expect(await leases.acquire('2/2', 'host-b:22:bb', 60_000, true)).toBe(1);
      const minute = Date.UTC(2026, 2, 2, 8, 0);
      await store.setState('finalised_before 1/2', minute + 3 * 60_000);
      await store.setState('finalised_before 2/2', minute);
      await store.setState('shards_done 1/2', 1);
      const r = await cli('status', '--store', url);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(
        /^partition 1\/2: host-a:11:aa \(token 1\), lease \d+\.\d s left; finalised before 2026-03-02T08:03:00(\.000)?Z, 0 min behind; done$/m,
      );
      expect(r.out).toMatch(
        /^partition 2\/2: host-b:22:bb \(token 1\), lease \d+\.\d s left; finalised before 2026-03-02T08:00:00(\.000)?Z, 3 min behind$/m,
      );
      const j = await cli('status', '--store', url, '--json');
      const parsed = JSON.parse(j.out) as {
        partitions: Array<{ partition: string; behindMinutes: number; done: boolean }>;
      };
      expect(parsed.partitions.map((p) => [p.partition, p.behindMinutes, p.done])).toEqual([
        ['1/2', 0, true],
        ['2/2', 3, false],
      ]);
    } finally {
      await leases.close();
      await store.close();
    }
  });

  it('refuses a SQLite store and a positional argument, in one line with exit 2', async () => {
    const sqlite = await cli('status', '--store', 'sqlite:/tmp/occusim-status-none.sqlite');
    expect(sqlite.code).toBe(2);
    const extra = await cli('status', 'x', '--store', 'postgres://u@127.0.0.1:1/x');
    expect(extra.code).toBe(2);
    expect(extra.err).toContain('too many arguments');
  });
});
