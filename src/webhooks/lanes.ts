import type { WallTime } from '../core/clock.js';

/**
 * Delivery lanes: each subscription's deliveries run on a lane of its own, so one slow, hanging
 * or resetting endpoint delays only itself (issue 33 item 2: with one tenant's endpoint hanging,
 * another tenant's receiver got nothing for 100 s, and in `run --serve` the run stopped).
 *
 * The engine still walks the subscriptions in creation order and waits for each lane's drain —
 * that is what makes the sequence of requests reaching a receiver shared by several
 * subscriptions the same in every run — but only while the lane makes progress: a lane whose
 * round of requests has not come back within `stallMs` (wall time) is left running on its own
 * (detached) and the walk goes on. A detached lane is not started again until its drain ends,
 * and a lane whose last drain stalled is not waited for at all the next time, so a hanging
 * endpoint costs the others `stallMs` once, not at every advance; a drain that completes
 * without stalling makes it an ordinary, awaited lane again. Each lane's own queue is bounded
 * (the durable outbox, read two rounds at a time), its concurrency is its connection's pipeline
 * depth, and its time is bounded by `http_timeout` per attempt.
 *
 * What a detached lane sends and when depends on the wall clock — as any endpoint slower than
 * its timeout already made it; healthy lanes keep the deterministic order.
 */
export const DEFAULT_LANE_STALL_MS = 2_000;
/**
 * A stall timer firing this much after its time means the thread was busy (a long synchronous
 * step of ingest, in the platform's thread) rather than the endpoint slow: timers run before the
 * poll for I/O, so the round's answers may be waiting unread. The lane gets another window.
 */
const LATE_TIMER_MS = 250;

interface Lane {
  /** The drain in progress (never rejects), or null. */
  running: Promise<void> | null;
  /** The last drain stalled: the next one is not waited for. */
  suspect: boolean;
}

export type Drain = (progress: () => void) => Promise<void>;

export class Lanes {
  readonly #stallMs: number;
  readonly #wall: WallTime | null;
  readonly #lanes = new Map<string, Lane>();

  /** `wall`: tells a late timer (a busy thread) from a stalled endpoint; without it every firing is a stall. */
  constructor(stallMs = DEFAULT_LANE_STALL_MS, wall: WallTime | null = null) {
    this.#stallMs = stallMs;
    this.#wall = wall;
  }

  /** Whether the lane of `id` has a drain in progress (a detached one). */
  busy(id: string): boolean {
    return this.#lanes.get(id)?.running != null;
  }

  /**
   * Starts `drain` on the lane of `id` unless one is in progress there, and waits for it while
   * it makes progress (`drain` calls `progress` after each round it completes). Resolves when
   * the drain ended, or when it stalled (it goes on, detached), or at once for a suspect lane.
   * A drain's failure rejects the wait when it was waited for, and is dropped when detached
   * (the next awaited drain meets the same store).
   */
  async run(id: string, drain: Drain): Promise<void> {
    let lane = this.#lanes.get(id);
    if (!lane) this.#lanes.set(id, (lane = { running: null, suspect: false }));
    if (lane.running) return;
    const l = lane;
    let stalled = false;
    let onStall: () => void = () => undefined;
    const stall = new Promise<void>((resolve) => (onStall = resolve));
    const wall = this.#wall;
    let armedAt = 0;
    let timer: NodeJS.Timeout;
    const arm = (): void => {
      armedAt = wall ? wall() : 0;
      timer = setTimeout(fire, this.#stallMs).unref();
    };
    const fire = (): void => {
      if (wall && wall() - armedAt > this.#stallMs + LATE_TIMER_MS) return arm();
      stalled = true;
      onStall();
    };
    arm();
    const progress = (): void => {
      clearTimeout(timer);
      if (!stalled) arm();
    };
    const done = drain(progress).finally(() => {
      clearTimeout(timer);
      l.running = null;
      l.suspect = stalled;
    });
    l.running = done.catch(() => undefined);
    if (l.suspect) return;
    await Promise.race([done, stall]);
  }

  /** Whether any lane has a drain in progress. */
  anyBusy(): boolean {
    for (const l of this.#lanes.values()) if (l.running) return true;
    return false;
  }

  /** Waits until no lane has a drain in progress, or `withinMs` passed; true when none has. */
  async idle(withinMs: number): Promise<boolean> {
    const running = (): Array<Promise<void>> => [...this.#lanes.values()].flatMap((l) => (l.running ? [l.running] : []));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs).unref()));
    let late = false;
    void deadline.then(() => (late = true));
    try {
      for (let r = running(); r.length > 0 && !late; r = running()) await Promise.race([Promise.all(r), deadline]);
    } finally {
      clearTimeout(timer);
    }
    return running().length === 0;
  }

  /** Drops the idle lanes of subscriptions that no longer exist. */
  forget(live: ReadonlySet<string>): void {
    for (const [id, l] of this.#lanes) if (!live.has(id) && !l.running) this.#lanes.delete(id);
  }
}
