import type { WallTime } from '../core/clock.js';

/**
 * Delivery lanes: each endpoint's deliveries run on a loop of their own, concurrently with every
 * other lane, so one slow, hanging or resetting endpoint delays only itself (issue 33 item 2:
 * with one tenant's endpoint hanging, another tenant's receiver got nothing for 100 s; and an
 * endpoint answering each request in 100 ms, 16 in flight, with a large backlog held every
 * subscription after it for the whole drain, because lanes were walked one after another).
 *
 * A lane is one organisation's endpoint (its connection: sender.ts `laneOf`); the engine asks it
 * for a pass up to a horizon (`request`: deliver what is due at that platform instant) and the
 * lane's loop runs passes until no newer request is waiting. Each lane has:
 * - its own bounded queue: the durable outbox, read two rounds at a time by its pass;
 * - its own concurrency: its connection's pipeline depth (webhooks/concurrency.ts);
 * - its own time budget: `wait` (an `advance` at `--speed max`, where waiting is what keeps
 *   deliveries deterministic) waits for a lane at most `budgetMs` of wall time. A lane whose
 *   pass has not ended by then goes on on its own, and is "suspect": the next passes are not
 *   waited for, until one ends within the budget — so an endpoint over its budget costs the
 *   others one budget, once, never one per round or per advance.
 *
 * A budget timer that fires more than LATE_TIMER_MS after its time means the thread was busy
 * (a long synchronous step of ingest in the platform's thread), not the endpoint slow: timers
 * run before the poll for I/O, so the lane's answers may be waiting unread; it gets another window.
 *
 * What a suspect lane sends and when depends on the wall clock — as any endpoint slower than its
 * budget already made it; lanes within their budget keep the deterministic order.
 */
export const DEFAULT_LANE_BUDGET_MS = 2_000;
const LATE_TIMER_MS = 250;

/**
 * One pass of a lane: deliver what is due at `horizonMs`, in order. `halted()` turning true
 * means: start no other round (the round in flight ends and is recorded).
 */
export type Pass = (horizonMs: number, halted: () => boolean) => Promise<void>;

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
  /** The last loop overran its budget: the next one is not waited for. */
  suspect: boolean;
  halted: boolean;
}

export class Lanes {
  readonly #budgetMs: number;
  readonly #wall: WallTime | null;
  readonly #lanes = new Map<string, Lane>();
  /** Loops running, and wall ms while at least one ran (the engine's delivery busy time). */
  #running = 0;
  #busySince = 0;
  #busyMs = 0;

  /** `wall`: tells a late timer (a busy thread) from an overrun, and measures busy time; without it every firing is an overrun. */
  constructor(budgetMs = DEFAULT_LANE_BUDGET_MS, wall: WallTime | null = null) {
    this.#budgetMs = budgetMs;
    this.#wall = wall;
  }

  /**
   * Asks the lane `key` for a pass up to `horizonMs` with `pass` (the latest one given is used):
   * starts its loop, or, when one runs, makes it run another pass once the current one ends.
   */
  request(key: string, horizonMs: number, pass: Pass): void {
    let l = this.#lanes.get(key);
    if (!l) this.#lanes.set(key, (l = { pass, horizonMs, requested: false, loop: null, outcome: null, overran: null, suspect: false, halted: false }));
    l.pass = pass;
    l.horizonMs = Math.max(l.horizonMs, horizonMs);
    l.requested = true;
    l.halted = false;
    if (!l.loop) this.#start(l);
  }

  /**
   * Waits for the loops of `keys` (all at once), each until it ends or overruns its budget; a
   * suspect lane is not waited for. A waited loop's failure rejects the wait (the store failed:
   * the caller's advance reports it); an unwaited one's is dropped (the next pass meets the same store).
   */
  async wait(keys: Iterable<string>): Promise<void> {
    const waits: Array<Promise<void>> = [];
    for (const key of keys) {
      const l = this.#lanes.get(key);
      if (l?.outcome && l.overran && !l.suspect) waits.push(Promise.race([l.outcome, l.overran]));
    }
    await Promise.all(waits);
  }

  #start(l: Lane): void {
    const wall = this.#wall;
    if (this.#running++ === 0 && wall) this.#busySince = wall();
    let over = false;
    let onOver: () => void = () => undefined;
    l.overran = new Promise<void>((resolve) => (onOver = resolve));
    let armedAt = 0;
    let timer: NodeJS.Timeout;
    const arm = (): void => {
      armedAt = wall ? wall() : 0;
      timer = setTimeout(fire, this.#budgetMs).unref();
    };
    const fire = (): void => {
      if (wall && wall() - armedAt > this.#budgetMs + LATE_TIMER_MS) return arm();
      over = true;
      l.suspect = true;
      onOver();
    };
    arm();
    const run = async (): Promise<void> => {
      while (l.requested && !l.halted) {
        l.requested = false;
        await l.pass(l.horizonMs, () => l.halted);
      }
    };
    const outcome = run().finally(() => {
      clearTimeout(timer);
      l.loop = l.outcome = l.overran = null;
      // A loop that ended within its budget makes the lane an awaited one again.
      l.suspect = over;
      if (--this.#running === 0 && wall) this.#busyMs += wall() - this.#busySince;
    });
    l.outcome = outcome;
    l.loop = outcome.catch(() => undefined);
  }

  /** Whether the lane `key` has a loop in progress. */
  busy(key: string): boolean {
    return this.#lanes.get(key)?.loop != null;
  }

  /** Whether any lane has a loop in progress. */
  anyBusy(): boolean {
    for (const l of this.#lanes.values()) if (l.loop) return true;
    return false;
  }

  /** Wall ms during which at least one lane was running (0 without a wall clock). */
  busyMs(): number {
    return this.#busyMs + (this.#running > 0 && this.#wall ? this.#wall() - this.#busySince : 0);
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
    while (pending() && !late) await Promise.race([how === 'all' ? Promise.all(loops()) : Promise.race(loops()), expired]);
    return !pending();
  }

  /** Drops the idle lanes whose keys are no longer in use. */
  forget(live: ReadonlySet<string>): void {
    for (const [key, l] of this.#lanes) if (!live.has(key) && !l.loop) this.#lanes.delete(key);
  }
}
