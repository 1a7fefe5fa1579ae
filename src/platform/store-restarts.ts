import type { Store } from '../store/port.js';
import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * The ingest's connection to the store, as the `store_restart` fault takes it away
 * (docs/scenario-format.md, "Network and faults"): at the fault's start the connection is
 * closed for real (SQLite: the file closed; PostgreSQL: the session closed, so its backend ends;
 * the server itself keeps running) and at its end a new one is opened, as an ingest reconnects
 * once the server is back. The run's clock cannot wait for the store (the flush it would wait
 * in is what moves the clock to the end of the outage), so the retry is the hive's. Meanwhile the pipeline asks `available` before touching the store: it
 * answers batches with the progress it had acked (the hives send them again after their ack
 * timeout), holds heartbeats and finalises nothing (cloud/pipeline.ts). A call that reaches
 * the store regardless is refused (STORE_FAILED), never silently dropped.
 *
 * The same object carries the ingest's connection across an `ingest_kill` (ingest-kills.ts):
 * the killed process's connection is closed with it and its successor `reconnect`s.
 */
export class RestartableStore {
  /** The port the ingest holds: every call goes to the connection open now. */
  readonly store: Store;
  #inner: Store | null;
  #away = false;
  readonly #open: () => Promise<Store>;

  constructor(inner: Store, open: () => Promise<Store>) {
    this.#inner = inner;
    this.#open = open;
    // Methods only: `then` and symbols stay undefined, so the port is never taken for a promise.
    this.store = new Proxy({} as Store, {
      get: (_target, name) =>
        typeof name !== 'string' || name === 'then' ? undefined : (...args: unknown[]) => this.#call(name, args),
    });
  }

  /** The store answers: not away, and a connection is open. */
  get available(): boolean {
    return !this.#away && this.#inner !== null;
  }

  /** The fault's start: the connection is closed and none is opened until `comeBack`. */
  async goAway(): Promise<void> {
    this.#away = true;
    const inner = this.#inner;
    this.#inner = null;
    await inner?.close();
  }

  /** The fault's end: a new connection, as after a restart of the server. */
  async comeBack(): Promise<void> {
    if (!this.#away) return;
    this.#inner = await this.#open();
    this.#away = false;
  }

  /** A new connection for a killed ingest's successor (its predecessor's closed with it). */
  async reconnect(): Promise<void> {
    if (this.#away) throw new AppError(ErrorCodes.STORE_FAILED, 'the store is away (store_restart): no connection now');
    if (this.#inner === null) this.#inner = await this.#open();
  }

  #call(name: string, args: unknown[]): Promise<unknown> {
    const inner = this.#inner;
    if (name === 'close') {
      this.#inner = null;
      return inner ? inner.close() : Promise.resolve();
    }
    if (inner === null)
      return Promise.reject(
        new AppError(
          ErrorCodes.STORE_FAILED,
          this.#away
            ? `the store is away (store_restart): ${name} refused`
            : `the store connection is closed: ${name} refused`,
        ),
      );
    return (inner[name as keyof Store] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
  }
}
