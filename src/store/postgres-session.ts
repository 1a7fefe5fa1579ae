import { systemClock } from '../core/clock.js';
import pg from 'pg';
import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * One PostgreSQL connection as the stores use it: BIGINT columns read as numbers (epoch ms
 * and counts stay far below 2^53), a statement's failure becomes a coded store error, and
 * calls run one at a time in the order they were made (a FIFO of our own: callers need not
 * await one call before making the next, and the order is the pipeline's). A `transaction`
 * is one entry of that FIFO, so no other caller's statement runs between its BEGIN and COMMIT.
 */
const types = new pg.TypeOverrides();
types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

/** The URL without its password, for messages. */
export const redactUrl = (url: string): string => url.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@');

/**
 * A fencing token (docs/scale-out.md, Failover): the writes of a fenced session commit only
 * while `partition_leases` holds this token for the partition. The lease row is read `FOR
 * SHARE` in the write's own transaction, so a takeover (which updates that row) waits for a
 * write under way and every later write of the old owner is refused (LEASE_LOST).
 */
export interface Fence {
  partition: string;
  token: number;
}

export interface SessionOptions {
  /** Fenced writes (`fenced`): only while the lease holds this token. */
  fence?: Fence;
  /**
   * How long a lost connection is tried again before the statement fails (a PostgreSQL restart):
   * wall ms; default 60 s.
   */
  reconnectWithinMs?: number;
}

const DEFAULT_RECONNECT_WITHIN_MS = 60_000;
const RECONNECT_PAUSE_MS = 250;

export class PostgresSession {
  #client: pg.Client;
  readonly #url: string;
  readonly #o: SessionOptions;
  #closed = false;
  /** The tail of the FIFO; never rejects. */
  #tail: Promise<unknown> = Promise.resolve();
  /** Set when the connection dropped: the next statement connects again first. */
  #broken = false;

  private constructor(client: pg.Client, url: string, o: SessionOptions) {
    this.#client = client;
    this.#url = url;
    this.#o = o;
  }

  static async connect(url: string, o: SessionOptions = {}): Promise<PostgresSession> {
    let client: pg.Client;
    try {
      client = await open(url, o);
    } catch (err) {
      throw new AppError(
        ErrorCodes.STORE_FAILED,
        `cannot connect to the PostgreSQL store ${redactUrl(url)}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return new PostgresSession(client, url, o);
  }

  query(text: string, values?: readonly unknown[]): Promise<pg.QueryResult> {
    return this.#next(() => this.#reconnecting(() => retryingDeadlocks(() => this.#run(text, values))));
  }

  async rows<R>(text: string, values?: readonly unknown[]): Promise<R[]> {
    return (await this.query(text, values)).rows as R[];
  }

  /** Runs the statements atomically: all or none (a failure rolls back and rejects with the first error). */
  async transaction(statements: ReadonlyArray<readonly [string, readonly unknown[]]>): Promise<void> {
    if (statements.length === 0) return;
    if (statements.length === 1) {
      const [text, values] = statements[0] as readonly [string, readonly unknown[]];
      await this.query(text, values);
      return;
    }
    await this.#atomically(statements, false);
  }

  /**
   * `transaction`, fenced when the session has a fence: the lease is checked (and held against a
   * takeover) in the same transaction; a taken lease rejects with LEASE_LOST and writes nothing.
   * Resolves to the last statement's result.
   */
  async fenced(statements: ReadonlyArray<readonly [string, readonly unknown[]]>): Promise<pg.QueryResult | null> {
    if (statements.length === 0) return null;
    if (this.#o.fence === undefined) {
      if (statements.length === 1) {
        const [text, values] = statements[0] as readonly [string, readonly unknown[]];
        return this.query(text, values);
      }
      return this.#atomically(statements, false);
    }
    return this.#atomically(statements, true);
  }

  #atomically(
    statements: ReadonlyArray<readonly [string, readonly unknown[]]>,
    fenced: boolean,
  ): Promise<pg.QueryResult | null> {
    return this.#next(() =>
      this.#reconnecting(() =>
        retryingDeadlocks(async () => {
          await this.#run('BEGIN');
          try {
            if (fenced) await this.#checkFence();
            let last: pg.QueryResult | null = null;
            for (const [text, values] of statements) last = await this.#run(text, values);
            await this.#run('COMMIT');
            return last;
          } catch (err) {
            await this.#run('ROLLBACK').catch(() => undefined);
            throw err;
          }
        }),
      ),
    );
  }

  async #checkFence(): Promise<void> {
    const f = this.#o.fence as Fence;
    const r = await this.#run('SELECT 1 FROM partition_leases WHERE partition = $1 AND token = $2 FOR SHARE', [
      f.partition,
      f.token,
    ]);
    if (r.rowCount === 0)
      throw new AppError(
        ErrorCodes.LEASE_LOST,
        `partition ${f.partition}: lease token ${f.token} was taken by another ingest process; write refused`,
      );
  }

  #next<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(op, op);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs `op`; when the connection is lost (a PostgreSQL restart, a dropped socket) connects again
   * and runs it again, until `reconnectWithinMs` has passed. Every write of the stores is
   * idempotent (upserts, inserts on conflict do nothing, deletes), and a transaction cut off is
   * rolled back whole by the server, so running it again is safe (docs/scale-out.md).
   */
  async #reconnecting<T>(op: () => Promise<T>): Promise<T> {
    // Wall time: how long a restart of the server may take, not the simulation's.
    const deadline = systemClock.now() + (this.#o.reconnectWithinMs ?? DEFAULT_RECONNECT_WITHIN_MS);
    for (;;) {
      try {
        if (this.#broken) await this.#reopen();
        return await op();
      } catch (err) {
        if (this.#closed || !connectionLost(err) || systemClock.now() > deadline) throw err;
        this.#broken = true;
        await new Promise((r) => setTimeout(r, RECONNECT_PAUSE_MS));
      }
    }
  }

  async #reopen(): Promise<void> {
    const old = this.#client;
    old.end().catch(() => undefined);
    try {
      this.#client = await open(this.#url, this.#o);
    } catch (err) {
      throw this.#failure(err);
    }
    this.#broken = false;
  }

  async #run(text: string, values?: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.#client.query(
        text,
        values === undefined || values.length === 0 ? undefined : (values as unknown[]),
      );
    } catch (err) {
      throw this.#failure(err);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    await this.#client.end().catch(() => undefined);
  }

  #failure(err: unknown): AppError {
    return new AppError(
      ErrorCodes.STORE_FAILED,
      `PostgreSQL store ${redactUrl(this.#url)}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** A connected client; a fenced session's server ends a transaction left idle past the lease (a stopped process must not hold the lease row). */
async function open(url: string, o: SessionOptions): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, types });
  // A dropped connection surfaces at the next statement; the event must not crash the process.
  client.on('error', () => undefined);
  await client.connect();
  if (o.fence !== undefined)
    await client.query(`SET idle_in_transaction_session_timeout = ${IDLE_IN_FENCED_TRANSACTION_MS}`);
  return client;
}

/**
 * A fenced transaction holds its lease row (FOR SHARE) until it commits. A process stopped
 * inside one (SIGSTOP, a long GC pause) would keep every other process from taking its lease;
 * the server ends such a session after this long idle in its transaction, releasing the row.
 */
const IDLE_IN_FENCED_TRANSACTION_MS = 2_000;

/** SQLSTATE classes and socket errors of a connection that is gone (or not yet back): worth connecting again. */
const LOST_SQLSTATES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
const LOST_SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN']);

function connectionLost(err: unknown): boolean {
  const cause = ((err as Error).cause ?? err) as { code?: unknown; message?: unknown };
  if (typeof cause.code === 'string' && (LOST_SQLSTATES.has(cause.code) || LOST_SOCKET_ERRORS.has(cause.code)))
    return true;
  return (
    typeof cause.message === 'string' &&
    /Connection terminated|not queryable|terminating connection|the database system is (starting up|shutting down)/i.test(
      cause.message,
    )
  );
}

/** PostgreSQL's deadlock_detected: the server rolled one of the transactions back. */
const DEADLOCK = '40P01';
const DEADLOCK_ATTEMPTS = 5;

/**
 * Runs a statement or transaction again when PostgreSQL chose it as a deadlock's victim (it was
 * rolled back whole, so running it again is safe): several ingest processes write one store.
 */
async function retryingDeadlocks<T>(op: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (attempt >= DEADLOCK_ATTEMPTS || ((err as Error).cause as { code?: string } | undefined)?.code !== DEADLOCK)
        throw err;
    }
  }
}
