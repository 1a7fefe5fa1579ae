import pg from 'pg';
import { AppError, ErrorCodes } from '../../core/errors.js';

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

export class PostgresSession {
  readonly #client: pg.Client;
  readonly #url: string;
  #closed = false;
  /** The tail of the FIFO; never rejects. */
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(client: pg.Client, url: string) {
    this.#client = client;
    this.#url = url;
  }

  static async connect(url: string): Promise<PostgresSession> {
    const client = new pg.Client({ connectionString: url, types });
    try {
      await client.connect();
    } catch (err) {
      throw new AppError(ErrorCodes.STORE_FAILED, `cannot connect to the PostgreSQL store ${redactUrl(url)}: ${(err as Error).message}`, { cause: err });
    }
    const session = new PostgresSession(client, url);
    // A dropped connection surfaces at the next statement; the event must not crash the process.
    client.on('error', () => undefined);
    return session;
  }

  query(text: string, values?: readonly unknown[]): Promise<pg.QueryResult> {
    return this.#next(() => retryingDeadlocks(() => this.#run(text, values)));
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
    await this.#next(() =>
      retryingDeadlocks(async () => {
        await this.#run('BEGIN');
        try {
          for (const [text, values] of statements) await this.#run(text, values);
          await this.#run('COMMIT');
        } catch (err) {
          await this.#run('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),
    );
  }

  #next<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(op, op);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #run(text: string, values?: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.#client.query(text, values === undefined || values.length === 0 ? undefined : (values as unknown[]));
    } catch (err) {
      throw this.#failure(err);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    await this.#client.end();
  }

  #failure(err: unknown): AppError {
    return new AppError(ErrorCodes.STORE_FAILED, `PostgreSQL store ${redactUrl(this.#url)}: ${(err as Error).message}`, { cause: err });
  }
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
      if (attempt >= DEADLOCK_ATTEMPTS || ((err as Error).cause as { code?: string } | undefined)?.code !== DEADLOCK) throw err;
    }
  }
}
