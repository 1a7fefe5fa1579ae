/**
 * The one clock every component reads. Domain code never calls Date.now(): it is handed a
 * Clock, so a run at `--speed max` is a pure function of (scenario, seed).
 */
export interface Clock {
  /** Current time in epoch milliseconds (UTC). */
  now(): number;
}

/** Virtual time that moves only when the simulation loop advances it (`--speed max`). */
export class VirtualClock implements Clock {
  #now: number;

  constructor(startMs: number) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  /** Moves time forward; moving backwards is a programming error. */
  advanceTo(ms: number): void {
    if (ms < this.#now) throw new RangeError(`clock cannot go back from ${this.#now} to ${ms}`);
    this.#now = ms;
  }
}

/** Source of wall time, injectable so pacing logic can be tested with a fake. */
export type WallTime = () => number;

export const systemWallTime: WallTime = () => performance.timeOrigin + performance.now();

/**
 * Scaled wall time for real-time runs (`--speed 1` or a factor): simulated time advances
 * `factor` times as fast as the wall, starting at `startMs`.
 */
export class ScaledWallClock implements Clock {
  readonly #startMs: number;
  readonly #factor: number;
  readonly #wall: WallTime;
  readonly #wall0: number;

  constructor(startMs: number, factor: number, wall: WallTime = systemWallTime) {
    if (!(factor > 0) || !Number.isFinite(factor)) throw new RangeError(`speed factor must be > 0, got ${factor}`);
    this.#startMs = startMs;
    this.#factor = factor;
    this.#wall = wall;
    this.#wall0 = wall();
  }

  now(): number {
    return this.#startMs + (this.#wall() - this.#wall0) * this.#factor;
  }

  /** Wall milliseconds since simulated time `simMs` was due (0 while it is still ahead): how late a run is. */
  wallLagMs(simMs: number): number {
    return Math.max(0, (this.now() - simMs) / this.#factor);
  }

  /** Wall milliseconds to wait until simulated time reaches `simMs` (0 when already past). */
  wallDelayUntil(simMs: number): number {
    return Math.max(0, (simMs - this.now()) / this.#factor);
  }
}

/** Wall time as a Clock, for adapters that face real clients (token lifetimes, rate limits). */
export const systemClock: Clock = { now: () => Math.floor(systemWallTime()) };
