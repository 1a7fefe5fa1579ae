import { PostgresSession } from './postgres-session.js';

/**
 * Partition leases in the shared PostgreSQL store (docs/scale-out.md, Failover): which ingest
 * process aggregates which floor partition, until when, under which fencing token.
 *
 * Time is the database server's (`clock_timestamp()`), not any process's: every process judges
 * expiry on one clock, so no skew between machines can make two processes think they hold a
 * partition. It is wall time, not the simulation's, on purpose: a lease measures how long a
 * process may be silent (dead, stopped, cut off) before another takes its floors, which is a
 * matter of real seconds whatever the simulated clock does (it stands still while shards wait).
 *
 * The token goes up by one at every takeover; the aggregation's writes carry it (a fenced
 * session, postgres-session.ts) and are refused once it changed. A holder renews its own token,
 * expired or not, as long as nobody took it.
 */
export interface LeaseRow {
  partition: string;
  owner: string;
  token: number;
  acquiredAtMs: number;
  renewedAtMs: number;
  expiresAtMs: number;
  /** The server's clock when read: expired when `expiresAtMs` ≤ it. */
  nowMs: number;
}

export class PostgresLeases {
  readonly #db: PostgresSession;

  private constructor(db: PostgresSession) {
    this.#db = db;
  }

  /** The store must exist and be migrated (a `PostgresStore` opened first creates the table). */
  static async open(url: string): Promise<PostgresLeases> {
    return new PostgresLeases(await PostgresSession.connect(url));
  }

  /**
   * Takes the partition when its lease has expired, or, with `mayCreate`, when nobody ever held
   * it. Resolves to the new token, or null when another process holds it.
   */
  async acquire(partition: string, owner: string, leaseMs: number, mayCreate: boolean): Promise<number | null> {
    const [taken] = await this.#db.rows<{ token: number }>(
      `UPDATE partition_leases SET owner = $2, token = token + 1, acquired_at = clock_timestamp(), renewed_at = clock_timestamp(), expires_at = clock_timestamp() + $3 * interval '1 millisecond'
       WHERE partition = $1 AND expires_at <= clock_timestamp() RETURNING token`,
      [partition, owner, leaseMs],
    );
    if (taken) return Number(taken.token);
    if (!mayCreate) return null;
    const [created] = await this.#db.rows<{ token: number }>(
      `INSERT INTO partition_leases (partition, owner, token, acquired_at, renewed_at, expires_at)
       VALUES ($1, $2, 1, clock_timestamp(), clock_timestamp(), clock_timestamp() + $3 * interval '1 millisecond')
       ON CONFLICT (partition) DO NOTHING RETURNING token`,
      [partition, owner, leaseMs],
    );
    return created ? Number(created.token) : null;
  }

  /** Extends our lease; false when another process took it (the token changed). */
  async renew(partition: string, owner: string, token: number, leaseMs: number): Promise<boolean> {
    const r = await this.#db.query(
      `UPDATE partition_leases SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + $4 * interval '1 millisecond'
       WHERE partition = $1 AND owner = $2 AND token = $3`,
      [partition, owner, token, leaseMs],
    );
    return r.rowCount === 1;
  }

  /** Lets the partition go at once (a clean stop): the next process to look takes it without waiting out the lease. */
  async release(partition: string, owner: string, token: number): Promise<void> {
    await this.#db.query(
      'UPDATE partition_leases SET expires_at = clock_timestamp() WHERE partition = $1 AND owner = $2 AND token = $3',
      [partition, owner, token],
    );
  }

  /** Every lease, by partition. */
  async list(): Promise<LeaseRow[]> {
    const rows = await this.#db.rows<{
      partition: string;
      owner: string;
      token: number;
      acquired: number;
      renewed: number;
      expires: number;
      now: number;
    }>(
      `SELECT partition, owner, token, (extract(epoch FROM acquired_at) * 1000)::bigint AS acquired, (extract(epoch FROM renewed_at) * 1000)::bigint AS renewed,
         (extract(epoch FROM expires_at) * 1000)::bigint AS expires, (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now
       FROM partition_leases ORDER BY partition COLLATE "C"`,
    );
    return rows.map((r) => ({
      partition: r.partition,
      owner: r.owner,
      token: Number(r.token),
      acquiredAtMs: Number(r.acquired),
      renewedAtMs: Number(r.renewed),
      expiresAtMs: Number(r.expires),
      nowMs: Number(r.now),
    }));
  }

  async close(): Promise<void> {
    await this.#db.close();
  }
}
