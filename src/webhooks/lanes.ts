import type { WallTime } from '../core/clock.js';

/**
 * Delivery lanes: each subscription's deliveries run on a loop of their own, concurrently with
 * every other lane, so one slow, hanging or resetting endpoint delays only itself (issue 33
 * item 2: with one tenant's endpoint hanging, another tenant's receiver got nothing for 100 s;
 * and an endpoint answering each request in 100 ms, 16 in flight, with a large backlog held
 * every subscription walked after it for the whole drain — first every other organisation's,
 * then, with a lane per organisation's endpoint, its own organisation's other subscriptions to
 * that endpoint).
 *
 * A lane is one subscription (its own connection: sender.ts `laneOf`); the engine asks it for a
 * pass up to a horizon (`request`: deliver what is due at that platform instant) and the lane's
 * loop runs passes until no newer request is waiting. Each lane has:
 * - its own bounded queue: the durable outbox, read two rounds at a time by its pass;
 * - its own concurrency: its connection's pipeline depth (webhooks/concurrency.ts);
 * - its own time budget. `wait` (an `advance` at `--speed max`, where waiting is what keeps
 *   deliveries deterministic) waits for a lane while its debt stays within `budgetMs`: the
 *   wall ms its rounds took beyond their allowance (`roundAllowanceMs`: 50 ms and 2 ms a
 *   delivery, ten times what a loopback receiver needs), since its last round within it. A
 *   lane over its budget goes on on its own and is "suspect": not waited for until a round
 *   comes back within its allowance again. A healthy endpoint with a large backlog is waited
 *   for however long its drain (each round is quick: the run's deliveries stay deterministic);
 *   a slow one costs a run `budgetMs` once, whether it hangs (one round that never comes back),
 *   answers each request in 100 ms with a backlog (1.6 s a round of 256, 16 in flight: within
 *   the 2 s stall window of the rule before, so waited for through its whole drain) or in
 *   250 ms with a few deliveries at every advance (a 10-minute run took 80 s instead of 4).
 *
 * A budget timer that fires more than LATE_TIMER_MS after its time means the thread was busy
 * (a long synchronous step of ingest in the platform's thread), not the endpoint slow: timers
 * run before the poll for I/O, so the lane's answers may be waiting unread; it gets another window.
 *
 * What a suspect lane sends and when depends on the wall clock — as any endpoint slower than its
 * budget already made it; lanes within their budget keep the deterministic order.
 */
export const DEFAULT_LANE_BUDGET_MS = 2_000;
/** The wall ms a round of `deliveries` may take without costing its lane anything. */
export const roundAllowanceMs = (deliveries: number): number => 50 + 2 * deliveries;
/** The allowance of the largest round the engine makes (256), what a waiter gives a round in progress. */
const MAX_ROUND_ALLOWANCE_MS = roundAllowanceMs(256);
const LATE_TIMER_MS = 250;

/** What a pass tells its lane, and asks it. */
export interface PassControl {
  /** True: start no other round (the round in flight ends and is recorded). */
  halted(): boolean;
  /** A round of `deliveries` completed (its answers in and recorded): the lane charges its time. */
  progress(deliveries: number): void;
}

/** One pass of a lane: deliver what is due at `horizonMs`, in order. */
export type Pass = (horizonMs: number, control: PassControl) => Promise<void>;

interface Lane {
  pass: Pass;
  /** The latest horizon asked for, and whether a pass has yet to take it. */
  horizonMs: number;
  requested: boolean;
  /** The loop in progress (never rejects), or null. */
  loop: Promise<void> | null;
  /** The loop in progress as it ends (rejects with a pass's failure): what a waiter awaits. */
  outcome: Promise<void> | null;
  /** Resolves when the loop in progress overran its budget. */
  overran: Promise<void> | null;
  /** Wall ms its rounds took beyond their allowance since its last round within it. */
  debtMs: number;
  /** Its debt went over the budget: it is not waited for until a round within its allowance. */
  suspect: boolean;
  halted: boolean;
}

export class Lanes {
  readonly #budgetMs: number;
  readonly #wall: WallTime;
  readonly #lanes = new Map<string, Lane>();
  /** Loops running, and wall ms while at least one ran (the engine's delivery busy time). */
  #running = 0;
  #busySince = 0;
  #busyMs = 0;
  /** The thread's event loop active ms (cumulative), read at the busy time's edges: how busy the sending thread was while delivering. */
  readonly #loopActive: (() => number) | null;
  #activeSince = 0;
  #busyActiveMs = 0;

  /**
   * `wall`: measures passes and busy time, and tells a late timer (a busy thread) from an
   * overrun. `loopActive`: the thread's cumulative event-loop active ms (perf only).
   */
  constructor(budgetMs: number, wall: WallTime, loopActive: (() => number) | null = null) {
    this.#budgetMs = budgetMs;
    this.#wall = wall;
    this.#loopActive = loopActive;
  }

  /**
   * Asks the lane `key` for a pass up to `horizonMs` with `pass` (the latest one given is used):
   * starts its loop, or, when one runs, makes it run another pass once the current one ends.
   */
  request(key: string, horizonMs: number, pass: Pass): void {
    let l = this.#lanes.get(key);
    if (!l)
      this.#lanes.set(
        key,
        (l = {
          pass,
          horizonMs,
          requested: false,
          loop: null,
          outcome: null,
          overran: null,
          debtMs: 0,
          suspect: false,
          halted: false,
        }),
      );
    l.pass = pass;
    l.horizonMs = Math.max(l.horizonMs, horizonMs);
    l.requested = true;
    l.halted = false;
    if (!l.loop) this.#start(l);
  }

  /**
   * Waits for the loops of `keys` (all at once), each until it ends or overruns its budget; a
   * suspect lane is not waited for. A waited loop's failure rejects the wait (the store failed:
   * the caller's advance reports it); an unwaited one's is dropped (the next pass meets the same
   * store). True when it waited for at least one.
   */
  async wait(keys: Iterable<string>): Promise<boolean> {
    const waits: Array<Promise<void>> = [];
    for (const key of keys) {
      const l = this.#lanes.get(key);
      if (l?.outcome && l.overran && !l.suspect) waits.push(Promise.race([l.outcome, l.overran]));
    }
    await Promise.all(waits);
    return waits.length > 0;
  }

  #start(l: Lane): void {
    const wall = this.#wall;
    if (this.#running++ === 0) {
      this.#busySince = wall();
      this.#activeSince = this.#loopActive?.() ?? 0;
    }
    let over = false;
    let onOver: () => void = () => undefined;
    let armedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    const overrun = (): void => {
      clearTimeout(timer);
      over = true;
      l.suspect = true;
      onOver();
    };
    const fire = (ms: number): void => (wall() - armedAt > ms + LATE_TIMER_MS ? arm(ms) : overrun());
    const arm = (ms: number): void => {
      armedAt = wall();
      timer = setTimeout(() => fire(ms), ms).unref();
    };
    /** The time a waiter may still wait for the round in progress: what is left of the budget, and a round's allowance. */
    const window = (): void => {
      clearTimeout(timer);
      // The waiters of this loop hold its promise: a new one only once it has resolved.
      if (over || !l.overran) {
        over = false;
        l.overran = new Promise<void>((resolve) => (onOver = resolve));
      }
      arm(Math.max(0, this.#budgetMs - l.debtMs) + MAX_ROUND_ALLOWANCE_MS);
    };
    window();
    let since = wall();
    const control: PassControl = {
      halted: () => l.halted,
      progress: (deliveries) => {
        const now = wall();
        const excess = now - since - roundAllowanceMs(deliveries);
        since = now;
        if (excess <= 0) {
          // Back within its allowance: the debt is paid, the lane is waited for again.
          l.debtMs = 0;
          l.suspect = false;
        } else {
          l.debtMs += excess;
          // Over its budget now: its waiters go on at once.
          if (l.debtMs > this.#budgetMs && !l.suspect) overrun();
        }
        if (!l.suspect) window();
      },
    };
    const run = async (): Promise<void> => {
      while (l.requested && !l.halted) {
        l.requested = false;
        since = wall();
        await l.pass(l.horizonMs, control);
      }
    };
    const outcome = run().finally(() => {
      clearTimeout(timer);
      l.loop = l.outcome = l.overran = null;
      if (over) l.suspect = true;
      if (--this.#running === 0) {
        this.#busyMs += wall() - this.#busySince;
        this.#busyActiveMs += (this.#loopActive?.() ?? 0) - this.#activeSince;
      }
    });
    l.outcome = outcome;
    l.loop = outcome.catch(() => undefined);
  }

  /** Whether the lane `key` has a loop in progress. */
  busy(key: string): boolean {
    return this.#lanes.get(key)?.loop != null;
  }

  /** The keys of the lanes with a loop in progress. */
  running(): string[] {
    return [...this.#lanes].flatMap(([key, l]) => (l.loop ? [key] : []));
  }

  /** Whether any lane has a loop in progress. */
  anyBusy(): boolean {
    for (const l of this.#lanes.values()) if (l.loop) return true;
    return false;
  }

  /** Wall ms during which at least one lane was running. */
  busyMs(): number {
    return this.#busyMs + (this.#running > 0 ? this.#wall() - this.#busySince : 0);
  }

  /** Event-loop active ms of the thread within `busyMs` (0 without `loopActive`). */
  busyLoopActiveMs(): number {
    const now = this.#running > 0 ? (this.#loopActive?.() ?? 0) - this.#activeSince : 0;
    return this.#busyActiveMs + now;
  }

  /** Every running loop starts no other round (the rounds in flight end and are recorded); a later `request` resumes. */
  halt(): void {
    for (const l of this.#lanes.values()) if (l.loop) l.halted = true;
  }

  /** Waits until no lane has a loop in progress, or `withinMs` passed; true when none has. */
  async idle(withinMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs).unref()));
    try {
      return await this.#waitFor(() => this.anyBusy(), 'all', deadline);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits until one of the loops running now ends, or `deadline` resolves; true when one did. */
  oneEnds(deadline: Promise<void>): Promise<boolean> {
    const before = [...this.#lanes.values()].flatMap((l) => (l.loop ? [[l, l.loop] as const] : []));
    return this.#waitFor(() => before.every(([l, loop]) => l.loop === loop), 'any', deadline);
  }

  async #waitFor(pending: () => boolean, how: 'all' | 'any', deadline: Promise<void>): Promise<boolean> {
    const loops = (): Array<Promise<void>> => [...this.#lanes.values()].flatMap((l) => (l.loop ? [l.loop] : []));
    let late = false;
    const expired = deadline.then(() => void (late = true));
    while (pending() && !late)
      await Promise.race([how === 'all' ? Promise.all(loops()) : Promise.race(loops()), expired]);
    return !pending();
  }

  /** Drops the idle lanes whose keys are no longer in use. */
  forget(live: ReadonlySet<string>): void {
    for (const [key, l] of this.#lanes) if (!live.has(key) && !l.loop) this.#lanes.delete(key);
  }
}
