import { DAY_MS, nextLocalDayStart, startOfLocalDay } from '../core/time.js';

/**
 * Local days of one site's IANA zone, for the traffic occupancy reset (spec §3, §8: "daily at
 * midnight of the site time zone"). The reset is the **first instant of each local day**:
 * local 00:00 when it exists, else the instant the clocks jump past it (America/Santiago and
 * Asia/Beirut skip 00:00 on their spring-forward days). Days last 23, 23.5, 24, 24.5 or 25 h
 * (22 and 26 h in Antarctica/Troll, whose DST shift is two hours).
 *
 * The next reset is computed once per day, not per event: `dayStartOf` is O(1) while time
 * stays inside the current day, and stepping to the next day costs one zone-offset lookup;
 * luxon (`core/time.ts`) is consulted only when the UTC offset changes across the step.
 */
export class LocalDays {
  readonly zone: string;
  readonly #offsetOf: (ms: number) => number;
  #start = Number.NaN;
  #next = Number.NaN;
  /** Whether #start is a wall-clock 00:00 (false after a skipped midnight). */
  #startIsMidnight = false;
  /** Known when the last step was the plain 24 h one; null = ask. */
  #nextIsMidnight: boolean | null = null;

  constructor(zone: string) {
    this.zone = zone;
    const offsetOf = zoneOffsetFn(zone);
    // Stepping day to day asks for the same instant twice (a day's end is the next's start).
    let lastMs = Number.NaN;
    let lastOffset = 0;
    this.#offsetOf = (ms) => {
      if (ms !== lastMs) {
        lastOffset = offsetOf(ms);
        lastMs = ms;
      }
      return lastOffset;
    };
  }

  /** First instant of the local day containing `ms`. */
  dayStartOf(ms: number): number {
    if (ms >= this.#start && ms < this.#next) return this.#start;
    if (ms >= this.#next && ms < this.#next + DAY_MS) this.#step();
    else this.#seek(ms);
    return ms < this.#next ? this.#start : this.dayStartOf(ms);
  }

  /** First instant of the local day after the one containing `ms`: the next reset. */
  nextDayStartOf(ms: number): number {
    this.dayStartOf(ms);
    return this.#next;
  }

  #seek(ms: number): void {
    this.#start = startOfLocalDay(ms, this.zone);
    this.#startIsMidnight = isWallMidnight(this.#start, this.#offsetOf);
    this.#next = this.#after(this.#start, this.#startIsMidnight);
  }

  #step(): void {
    const start = this.#next;
    this.#startIsMidnight = this.#nextIsMidnight ?? isWallMidnight(start, this.#offsetOf);
    this.#next = this.#after(start, this.#startIsMidnight);
    this.#start = start;
  }

  /** The day start following `start`: start + 24 h when the offset is unchanged across it. */
  #after(start: number, startIsMidnight: boolean): number {
    const candidate = start + DAY_MS;
    const startOffset = this.#offsetOf(start);
    if (startIsMidnight && this.#offsetOf(candidate) === startOffset) {
      this.#nextIsMidnight = true;
      return candidate;
    }
    this.#nextIsMidnight = null;
    return nextLocalDayStart(start, this.zone);
  }
}

function isWallMidnight(ms: number, offsetOf: (ms: number) => number): boolean {
  return (((ms + offsetOf(ms)) % DAY_MS) + DAY_MS) % DAY_MS === 0;
}

/**
 * UTC offset (ms) of `zone` at an instant, from one cached Intl formatter (`format` is
 * several times faster than luxon's `formatToParts`-based offset).
 */
export function zoneOffsetFn(zone: string): (ms: number) => number {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  return (ms: number): number => {
    const whole = Math.floor(ms / 1000) * 1000;
    // "M/D/YYYY, HH:MM:SS"
    const s = fmt.format(whole);
    const [date = '', time = ''] = s.split(', ');
    const [mo = 0, d = 0, y = 0] = date.split('/').map(Number);
    const [h = 0, mi = 0, se = 0] = time.split(':').map(Number);
    return Date.UTC(y, mo - 1, d, h, mi, se) - whole;
  };
}
