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
 *   deliveries deterministic) waits for a lane's pass beyond FREE_PASS_MS only while the lane's
 *   debt — the wall ms its passes took beyond FREE_PASS_MS each, since its last quick pass —
 *   stays within `budgetMs`. A lane over it goes on on its own and is "suspect": its passes
 *   are not waited for until one that sends something ends within FREE_PASS_MS (the endpoint is
 *   quick again). So a slow endpoint costs a run `budgetMs` once, whether it is slow by hanging
 *   (one long pass), by a backlog (one long pass) or by answering each request in 250 ms (a
 *   slow pass at every advance: before the debt, every advance waited for it, and a 10-minute
 *   run took 80 s instead of 4).
 *
 * A budget timer that fires more than LATE_TIMER_MS after its time means the thread was busy
 * (a long synchronous step of ingest in the platform's thread), not the endpoint slow: timers
 * run before the poll for I/O, so the lane's answers may be waiting unread; it gets another window.
 *
 * What a suspect lane sends and when depends on the wall clock — as any endpoint slower than its
 * budget already made it; lanes within their budget keep the deterministic order.
 */
export const DEFAULT_LANE_BUDGET_MS = 2_000;
/** A pass this quick costs nothing (a loopback receiver answers a round of 256 in ~20 ms, a few deliveries in 1–3 ms). */
export const FREE_PASS_MS = 50;
const LATE_TIMER_MS = 250;

/**
 * One pass of a lane: deliver what is due at `horizonMs`, in order; resolves to the number of
 * attempts it made. `halted()` turning true means: start no other round (the round in flight
 * ends and is recorded).
 */
export type Pass = (horizonMs: number, halted: () => boolean) => Promise<number>;

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
  /** Wall ms its passes took beyond FREE_PASS_MS each since its last quick pass. */
  debtMs: number;
  /** Its debt went over the budget: its passes are not waited for until a quick one. */
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

  /** `wall`: measures passes and busy time, and tells a late timer (a busy thread) from an overrun. */
  constructor(budgetMs: number, wall: WallTime) {
    this.#budgetMs = budgetMs;
    this.#wall = wall;
  }

  /**
   * Asks the lane `key` for a pass up to `horizonMs` with `pass` (the latest one given is used):
   * starts its loop, or, when one runs, makes it run another pass once the current one ends.
   */
  request(key: string, horizonMs: number, pass: Pass): void {
    let l = this.#lanes.get(key);
    if (!l) this.#lanes.set(key, (l = { pass, horizonMs, requested: false, loop: null, outcome: null, overran: null, debtMs: 0, suspect: false, halted: false }));
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
    if (this.#running++ === 0) this.#busySince = wall();
    let over = false;
    let onOver: () => void = () => undefined;
    let armedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    const fire = (ms: number): void => {
      if (wall() - armedAt > ms + LATE_TIMER_MS) return arm(ms);
      over = true;
      l.suspect = true;
      onOver();
    };
    const arm = (ms: number): void => {
      armedAt = wall();
      timer = setTimeout(() => fire(ms), ms).unref();
    };
    /** The time a waiter may still wait for this loop: what is left of the budget, and a free pass. */
    const window = (): void => {
      clearTimeout(timer);
      over = false;
      l.overran = new Promise<void>((resolve) => (onOver = resolve));
      arm(Math.max(0, this.#budgetMs - l.debtMs) + FREE_PASS_MS);
    };
    window();
    const run = async (): Promise<void> => {
      while (l.requested && !l.halted) {
        l.requested = false;
        const t0 = wall();
        const sent = await l.pass(l.horizonMs, () => l.halted);
        const took = wall() - t0;
        if (sent > 0 && took <= FREE_PASS_MS) {
          // The endpoint is quick again: its debt is paid, it is waited for again.
          if (l.suspect || l.debtMs > 0) {
            l.debtMs = 0;
            l.suspect = false;
            window();
          }
        } else if (!l.suspect) {
          l.debtMs += Math.max(0, took - FREE_PASS_MS);
          if (l.debtMs > this.#budgetMs) l.suspect = true;
        }
      }
    };
    const outcome = run().finally(() => {
      clearTimeout(timer);
      l.loop = l.outcome = l.overran = null;
      if (over) l.suspect = true;
      if (--this.#running === 0) this.#busyMs += wall() - this.#busySince;
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

  /** Wall ms during which at least one lane was running. */
  busyMs(): number {
    return this.#busyMs + (this.#running > 0 ? this.#wall() - this.#busySince : 0);
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
