import type { Clock } from '../core/clock.js';
import { NO_CALL, whileActive, type Call } from './call.js';

/**
 * The tool server's caches (platform-reference §5: topology ~10 min, occupancy ~60 s).
 *
 * A `CallScope` numbers tool calls: within one call an entry is always reused, so a TTL of 0
 * still reads the topology once per call, and no two calls share a read. With
 * stale-while-revalidate, an expired value that loaded is answered at once while a fresh one
 * loads in the background: on the fleet the devices query takes ~0.5–1 s, and no call should
 * wait for it after the first.
 *
 * A load is shared by every call that asks while it runs, so no call's cancellation aborts it:
 * a cancelled call stops waiting (call.ts, `whileActive`) and the value is cached for the next.
 * A call that waits for a load counts it as one step of its progress, named by `label`.
 */
export class CallScope {
  epoch = 0;

  next(): void {
    this.epoch++;
  }
}

interface Entry<T> {
  at: number;
  epoch: number;
  value: Promise<T>;
  loaded: boolean;
}

export class Cached<T> {
  readonly #load: () => Promise<T>;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #scope: CallScope;
  readonly #revalidate: boolean;
  readonly #onRefresh: ((error: unknown) => void) | undefined;
  readonly #label: string;
  #entry: Entry<T> | null = null;
  #refreshing = false;

  /** `onRefresh` hears each background refresh end: `null` when it loaded, else its error. */
  constructor(
    load: () => Promise<T>,
    opts: {
      clock: Clock;
      ttlMs: number;
      scope: CallScope;
      staleWhileRevalidate?: boolean;
      onRefresh?: (error: unknown) => void;
      /** What a load reads, as a progress message names it ("devices read"). */
      label?: string;
    },
  ) {
    this.#label = opts.label ?? 'read';
    this.#onRefresh = opts.onRefresh;
    this.#load = load;
    this.#clock = opts.clock;
    this.#ttlMs = opts.ttlMs;
    this.#scope = opts.scope;
    // A TTL of 0 means "no cache": never answer from an expired value.
    this.#revalidate = (opts.staleWhileRevalidate ?? false) && opts.ttlMs > 0;
  }

  /** When the current value was read (null: none). */
  get readAt(): number | null {
    return this.#entry?.at ?? null;
  }

  get(call: Call = NO_CALL): Promise<T> {
    const now = this.#clock.now();
    let e = this.#entry;
    if (e && (e.epoch === this.#scope.epoch || now - e.at < this.#ttlMs)) return this.#wait(e, call);
    if (e?.loaded && this.#revalidate) {
      this.#refresh();
      return e.value;
    }
    e = this.#start(now);
    return this.#wait(e, call);
  }

  /** The entry's value as the call sees it: at once when loaded, else one step of its progress. */
  #wait(e: Entry<T>, call: Call): Promise<T> {
    if (e.loaded || call === NO_CALL) return e.value;
    call.progress.plan(1);
    return whileActive(call, e.value).then((v) => {
      call.progress.step(this.#label);
      return v;
    });
  }

  /** Forget the value: the next `get()` waits for a fresh read. */
  invalidate(): void {
    this.#entry = null;
  }

  #start(now: number): Entry<T> {
    const entry: Entry<T> = { at: now, epoch: this.#scope.epoch, value: this.#load(), loaded: false };
    this.#entry = entry;
    void entry.value.then(
      () => void (entry.loaded = true),
      () => void (this.#entry === entry && (this.#entry = null)),
    );
    return entry;
  }

  #refresh(): void {
    if (this.#refreshing) return;
    this.#refreshing = true;
    const value = this.#load();
    void value
      .then(
        () => {
          this.#entry = { at: this.#clock.now(), epoch: this.#scope.epoch, value, loaded: true };
          this.#onRefresh?.(null);
        },
        (err: unknown) => this.#onRefresh?.(err ?? 'failed'), // keep answering the old value; the next expiry tries again
      )
      .finally(() => (this.#refreshing = false));
  }
}
