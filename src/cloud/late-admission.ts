import { HOUR_MS } from '../core/time.js';

/**
 * Admission of late data, per hive (issue 33 item 7). A packet for a finalised minute that is
 * not open reopens it: the stored payloads covering that minute are re-read and the minute is
 * recomputed and rolled up again. Legitimate late data (a hive back from an outage sending its
 * buffer) touches one or two such minutes per batch; a hive sending 400 packets each in its own
 * past minute made the cloud re-read the store 400 times per batch (300 such batches: the API
 * unanswered for 60 s, RSS 192 → 1,108 MB). So each hive may reopen at most
 * `LATE_MINUTES_PER_BATCH` distinct minutes per batch and `LATE_MINUTES_PER_HIVE_HOUR` per hour
 * of the platform's clock; packets of the minutes beyond are dead-lettered
 * `LATE_BEYOND_BUDGET` (stored in the ledger, never silently dropped). A minute already open
 * (reopened by an earlier batch, or still in the window) costs nothing and is never refused.
 * Deterministic: the decision depends on the packets in order and the clock at receipt.
 */
export const LATE_MINUTES_PER_BATCH = 16;
/** Twelve hours of an outage's backlog per hour: a hive's buffer drains well within it. */
export const LATE_MINUTES_PER_HIVE_HOUR = 720;

/** What the admission reads of a message: its packets' sensing instants and kinds, in order. */
export interface LatePackets {
  readonly count: number;
  readonly sensor: ArrayLike<number>;
  readonly kind: ArrayLike<number>;
  readonly sensedAt: ArrayLike<number>;
}

/** A (minute, packet kind) pair: presence and traffic minutes reopen separately. */
const keyOf = (minuteMs: number, kind: number): string => `${minuteMs}|${kind}`;

export class LateAdmission {
  /** Per hive serial: the clock hour and the distinct minutes reopened in it. */
  readonly #spent = new Map<string, { hour: number; minutes: number }>();

  /**
   * The (minute, kind) keys of the message's packets to refuse; empty when all are admitted.
   * `needsReopen(minuteMs, kind)` says whether a packet would reopen a finalised minute. The
   * admitted minutes are charged to the hive's hourly budget.
   */
  refuse(
    serial: string,
    receivedAtMs: number,
    p: LatePackets,
    minuteOf: (t: number) => number,
    needsReopen: (minuteMs: number, kind: number) => boolean,
  ): Set<string> {
    const refused = new Set<string>();
    const hour = Math.floor(receivedAtMs / HOUR_MS);
    let spent = this.#spent.get(serial);
    if (!spent || spent.hour !== hour) this.#spent.set(serial, (spent = { hour, minutes: 0 }));
    const admitted = new Set<string>();
    for (let i = 0; i < p.count; i++) {
      if ((p.sensor[i] as number) < 0) continue;
      const minuteMs = minuteOf(p.sensedAt[i] as number);
      const kind = p.kind[i] as number;
      const key = keyOf(minuteMs, kind);
      if (admitted.has(key) || refused.has(key) || !needsReopen(minuteMs, kind)) continue;
      if (admitted.size < LATE_MINUTES_PER_BATCH && spent.minutes < LATE_MINUTES_PER_HIVE_HOUR) {
        admitted.add(key);
        spent.minutes++;
      } else refused.add(key);
    }
    return refused;
  }
}

/** Whether a packet sensed at `minuteMs` of `kind` falls in a refused key. */
export function isRefused(refused: ReadonlySet<string>, minuteMs: number, kind: number): boolean {
  return refused.has(keyOf(minuteMs, kind));
}
