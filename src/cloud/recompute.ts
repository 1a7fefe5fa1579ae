import { occupancyEventType } from '../core/event-types.js';
import { HOUR_MS, MINUTE_MS } from '../core/time.js';
import { eventId } from './events.js';
import { LocalDays } from './local-day.js';

import { Bucketer, RETENTION_MS } from './rollup.js';
import type { OccupancyEvent, RollupBucket, Store } from '../store/port.js';
import { ROLLUP_LEVELS, type Interval, type PresenceMinuteRow, type TrafficMinuteRow } from '../store/rows.js';

/**
 * The per-minute recompute of spec §6 rule 1 / §8: at every new minute of sim time the
 * complete minutes of the rolling look-back window are recomputed from everything received
 * so far, written (upsert) to the stored series, and an occupancy `_1M` event is emitted for
 * every (space, minute) of the window: its first value (revision 0), then at each later
 * minute's recompute the minute again (revision n: same timestamp, a new event id, the
 * recomputed value, changed or not), as the spec's platform does ("within a rolling 5-minute
 * window events repeat"; consumers deduplicate by timestamp and keep the latest). A
 * subscription with `send_on_value_change` is spared the unchanged repeats (webhooks/
 * value-change.ts). The end-of-run `finish` recompute adds no repeats, only changes. A minute
 * leaving the window is finalised: written a last time, its rollup buckets marked dirty, its
 * data dropped. Data for a finalised minute reopens it from the store (still stored, no
 * event). Rollup buckets are recomputed once they are complete, or at finish.
 */
export interface RecomputeCounters {
  eventsEmitted: number;
  /** Packets for a minute already computed, still inside the window: they revise it. */
  lateInWindow: number;
  /** Packets for a minute already finalised: stored and rolled up, no event. */
  lateBeyondWindow: number;
}

/** What the recompute needs of an aggregator: its open minutes, computed without forgetting. */
export interface MinuteSource<Row> {
  hasMinute(minuteMs: number): boolean;
  /** Minutes holding data, ascending. */
  openMinutes(): number[];
  /** The minute's rows (sorted by id) from the data held so far; keeps the data. */
  compute(minuteMs: number): Row[];
  drop(minuteMs: number): void;
  /** Presence only: the instantaneous count of every sampled (space, instant) of the minute. */
  instants?(minuteMs: number, visit: (spaceId: string, sensedAtMs: number, count: number) => void): void;
}

export interface RecomputeOptions {
  store: Store;
  presence: MinuteSource<PresenceMinuteRow>;
  traffic: MinuteSource<TrafficMinuteRow>;
  lookbackMs: number;
  /** IANA zone of the site holding a space (rollup buckets are local-time aligned). */
  zoneOf: (spaceId: string) => string;
  onEvent?: (e: OccupancyEvent) => void;
  /** Appended to the state keys: one horizon per ingest partition on a shared store (docs/scale-out.md). */
  stateKeySuffix?: string;
}

const STATE_FINALISED = 'finalised_before';
/** Earliest finalised minute reopened by late data and not yet finalised again. */
const STATE_REOPENED = 'reopened_from';
const PRUNE_EVERY_MS = HOUR_MS;

export class Recompute {
  #o: RecomputeOptions;
  readonly counters: RecomputeCounters = { eventsEmitted: 0, lateInWindow: 0, lateBeyondWindow: 0 };
  /** Minutes before this are finalised (persisted, so a restart knows what to reload). */
  finalisedBefore: number;
  reopenedFrom: number;
  #lastRecompute = -Infinity;
  #lastPrune = -Infinity;
  readonly #computed = new Set<number>();
  /** Minutes computed and unchanged since: recomputing them would give the same rows. */
  readonly #clean = new Map<number, PresenceMinuteRow[]>();
  readonly #emitted = new Map<string, { value: number; revision: number }>();
  /** Last instantaneous count emitted per space (FLOOR/ROOM/ZONE_OCCUPANCY on change). */
  readonly #lastCount = new Map<string, number>();
  /** Buckets to recompute, by end instant (refreshed once complete). */
  readonly #dirty = new Map<number, Map<string, RollupBucket>>();
  readonly #bucketers = new Map<string, Bucketer>();

  /** A reopened minute not yet persisted (written before the batch that reopened it is acked). */
  #reopenedDirty = false;

  constructor(o: RecomputeOptions) {
    this.#o = o;
    this.finalisedBefore = -Infinity;
    this.reopenedFrom = Infinity;
  }

  #key(name: string): string {
    return name + (this.#o.stateKeySuffix ?? '');
  }

  /** Reads the persisted horizon (crash recovery); before anything else. */
  async load(): Promise<void> {
    this.finalisedBefore = (await this.#o.store.getState(this.#key(STATE_FINALISED))) ?? -Infinity;
    const reopened = await this.#o.store.getState(this.#key(STATE_REOPENED));
    this.reopenedFrom = reopened === undefined || reopened === Number.MAX_SAFE_INTEGER ? Infinity : reopened;
    // The minutes from the horizon on are computed again from the start: their instant events
    // are told apart from the last count emitted before them, as when they were first computed
    // (an empty record would send a count equal to the last one again).
    if (Number.isFinite(this.finalisedBefore))
      for (const { spaceId, value } of await this.#o.store.lastInstantCounts(this.finalisedBefore))
        this.#lastCount.set(spaceId, value);
  }

  /**
   * Swaps the presence aggregator (ingest tables rebuilt after the asset catalogue changed);
   * the caller refills it from the store, so cached rows of unchanged minutes no longer hold.
   */
  replacePresence(presence: MinuteSource<PresenceMinuteRow>): void {
    this.#o = { ...this.#o, presence };
    this.#clean.clear();
  }

  /** Where crash recovery must reload raw packets from. */
  recoverFrom(): number {
    return Math.max(Number.MIN_SAFE_INTEGER, Math.min(this.finalisedBefore, this.reopenedFrom));
  }

  /** Classifies an incoming packet's minute; true when the minute must be reopened from the store. */
  noteArrival(minuteMs: number, open: boolean): boolean {
    this.#clean.delete(minuteMs);
    if (minuteMs < this.finalisedBefore && !open) {
      this.counters.lateBeyondWindow++;
      // Persisted (persistReopened) before the batch is acked, so a restart reloads this minute too.
      if (minuteMs < this.reopenedFrom) {
        this.reopenedFrom = minuteMs;
        this.#reopenedDirty = true;
      }
      return true;
    }
    if (minuteMs < this.finalisedBefore) this.counters.lateBeyondWindow++;
    else if (this.#computed.has(minuteMs)) this.counters.lateInWindow++;
    return false;
  }

  /** Writes the reopened horizon noted by `noteArrival`, if it moved. */
  async persistReopened(): Promise<void> {
    if (!this.#reopenedDirty) return;
    this.#reopenedDirty = false;
    await this.#o.store.setState(this.#key(STATE_REOPENED), this.reopenedFrom);
  }

  async advance(nowMs: number): Promise<void> {
    const nowMinute = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
    const horizon = nowMs - this.#o.lookbackMs;
    if (nowMinute > this.#lastRecompute) {
      this.#lastRecompute = nowMinute;
      await this.#recompute((m) => m + MINUTE_MS <= nowMs, nowMs, true);
    }
    await this.#finalise(
      (m) => m + MINUTE_MS <= horizon,
      Math.max(this.finalisedBefore, Math.floor(horizon / MINUTE_MS) * MINUTE_MS),
    );
    if (nowMs - this.#lastPrune >= PRUNE_EVERY_MS) await this.#prune(nowMs);
  }

  async finish(nowMs: number): Promise<void> {
    await this.#recompute(() => true, nowMs, false);
    await this.#finalise(() => true, Math.max(this.finalisedBefore, Math.floor(nowMs / MINUTE_MS) * MINUTE_MS));
    await this.#refreshRollups(Infinity);
  }

  #openMinutes(): number[] {
    return [...new Set([...this.#o.presence.openMinutes(), ...this.#o.traffic.openMinutes()])].sort((a, b) => a - b);
  }

  /** `repeat`: the per-minute recompute, which sends every minute of its window again (rule 1). */
  async #recompute(due: (m: number) => boolean, nowMs: number, repeat: boolean): Promise<void> {
    const presence: PresenceMinuteRow[] = [];
    const traffic: TrafficMinuteRow[] = [];
    const events: OccupancyEvent[] = [];
    for (const m of this.#openMinutes().filter(due)) {
      // Only minutes that received data since their last computation can change: the others
      // are sent again as they are (their stored rows stand).
      const clean = this.#clean.get(m);
      if (clean !== undefined) {
        if (repeat && m >= this.finalisedBefore && this.#computed.has(m))
          for (const r of clean) this.#event(r, nowMs, events, true);
        continue;
      }
      const rows = this.#o.presence.compute(m);
      this.#clean.set(m, rows);
      // Loops, not spreads: a fleet's minute has more rows than the engine's argument limit.
      for (const r of rows) presence.push(r);
      for (const r of this.#o.traffic.compute(m)) traffic.push(r);
      if (m >= this.finalisedBefore) {
        if (!this.#computed.has(m)) this.#instantEvents(m, nowMs, events);
        this.#computed.add(m);
        for (const r of rows) this.#event(r, nowMs, events, repeat);
      }
    }
    // The minutes and the events they produce in one transaction: the outbox never holds an
    // event whose minute is not stored, nor misses one whose minute is.
    await this.#write(presence, traffic, events);
    if (events.length > 0) {
      this.counters.eventsEmitted += events.length;
      for (const e of events) this.#o.onEvent?.(e);
    }
  }

  /** A `_1M` event of a minute's row: its first, a changed value, or (`again`) a repeat. */
  #event(r: PresenceMinuteRow, nowMs: number, out: OccupancyEvent[], again: boolean): void {
    const key = `${r.spaceId}|${r.minuteMs}`;
    const prev = this.#emitted.get(key);
    if (!again && prev !== undefined && prev.value === r.value) return;
    const revision = prev === undefined ? 0 : prev.revision + 1;
    this.#emitted.set(key, { value: r.value, revision });
    const type = occupancyEventType(r.spaceId, true);
    out.push({
      eventId: eventId(type, r.spaceId, r.minuteMs, revision),
      type,
      spaceId: r.spaceId,
      minuteMs: r.minuteMs,
      value: r.value,
      revision,
      emittedAtMs: nowMs,
    });
  }

  /**
   * The "current count" events of a minute computed for the first time: at each sensing
   * instant (in time order, then space id) where a space's count differs from the last one
   * emitted for it. Late data revising those instants afterwards is reflected by the `_1M`
   * revisions, not by new instant events (docs/occupancy.md).
   */
  #instantEvents(m: number, nowMs: number, out: OccupancyEvent[]): void {
    const instants: Array<{ spaceId: string; t: number; count: number }> = [];
    this.#o.presence.instants?.(m, (spaceId, t, count) => instants.push({ spaceId, t, count }));
    instants.sort((a, b) => a.t - b.t || (a.spaceId < b.spaceId ? -1 : a.spaceId > b.spaceId ? 1 : 0));
    for (const { spaceId, t, count } of instants) {
      if (this.#lastCount.get(spaceId) === count) continue;
      this.#lastCount.set(spaceId, count);
      const type = occupancyEventType(spaceId, false);
      out.push({
        eventId: eventId(type, spaceId, t, 0),
        type,
        spaceId,
        minuteMs: t,
        value: count,
        revision: 0,
        emittedAtMs: nowMs,
      });
    }
  }

  async #finalise(due: (m: number) => boolean, finalisedBefore: number): Promise<void> {
    const minutes = this.#openMinutes().filter(due);
    if (minutes.length > 0) {
      // A clean minute's rows are already stored: finalising it only drops its data.
      const changed = minutes.filter((m) => !this.#clean.has(m));
      const fresh = changed.map((m) => [m, this.#o.presence.compute(m)] as const);
      await this.#write(
        fresh.flatMap(([, rows]) => rows),
        changed.flatMap((m) => this.#o.traffic.compute(m)),
      );
      const presence = [...minutes.flatMap((m) => this.#clean.get(m) ?? []), ...fresh.flatMap(([, rows]) => rows)];
      const traffic = minutes.flatMap((m) => this.#o.traffic.compute(m));
      for (const m of minutes) {
        this.#o.presence.drop(m);
        this.#o.traffic.drop(m);
      }
      for (const r of presence) this.#markDirty(r.spaceId, r.minuteMs, 'presence');
      for (const r of traffic) this.#markDirty(r.sensorId, r.minuteMs, 'traffic');
      for (const m of minutes) this.#forget(m);
    }
    if (this.reopenedFrom !== Infinity && !this.#openMinutes().some((m) => m < this.finalisedBefore)) {
      this.reopenedFrom = Infinity;
      this.#reopenedDirty = false;
      await this.#o.store.setState(this.#key(STATE_REOPENED), Number.MAX_SAFE_INTEGER);
    }
    if (finalisedBefore > this.finalisedBefore) {
      this.finalisedBefore = finalisedBefore;
      await this.#o.store.setState(this.#key(STATE_FINALISED), finalisedBefore);
    }
    await this.#refreshRollups(this.finalisedBefore);
  }

  #forget(m: number): void {
    this.#computed.delete(m);
    this.#clean.delete(m);
    for (const key of [...this.#emitted.keys()]) if (key.endsWith(`|${m}`)) this.#emitted.delete(key);
  }

  async #write(
    presence: PresenceMinuteRow[],
    traffic: TrafficMinuteRow[],
    events: readonly OccupancyEvent[] = [],
  ): Promise<void> {
    if (presence.length === 0 && traffic.length === 0 && events.length === 0) return;
    await this.#o.store.writeMinutes({
      presence: presence.sort(bySpaceThenMinute),
      traffic: traffic.sort(bySensorThenMinute),
      events,
    });
  }

  #bucketer(spaceId: string): Bucketer {
    const zone = this.#o.zoneOf(spaceId);
    let b = this.#bucketers.get(zone);
    if (!b) this.#bucketers.set(zone, (b = new Bucketer(new LocalDays(zone))));
    return b;
  }

  /** Marks the rollup buckets of a space's (presence) or sensor's (traffic) minute for recomputation. */
  #markDirty(spaceId: string, minuteMs: number, kind: 'presence' | 'traffic'): void {
    const b = this.#bucketer(spaceId);
    for (const level of ROLLUP_LEVELS) {
      const [startMs, endMs] = b.bucketOf(minuteMs, level);
      let byEnd = this.#dirty.get(endMs);
      if (!byEnd) this.#dirty.set(endMs, (byEnd = new Map()));
      byEnd.set(
        `${kind}|${spaceId}|${level}|${startMs}`,
        kind === 'presence' ? { spaceId, level, startMs, endMs } : { kind, spaceId, level, startMs, endMs },
      );
    }
  }

  /** Recomputes dirty buckets that are complete (end ≤ before), in a fixed order. */
  async #refreshRollups(before: number): Promise<void> {
    const ready: Array<[string, RollupBucket]> = [];
    for (const [endMs, byEnd] of this.#dirty) {
      if (endMs > before) continue;
      for (const b of byEnd) ready.push(b);
      this.#dirty.delete(endMs);
    }
    if (ready.length === 0) return;
    ready.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    await this.#o.store.refreshRollups(ready.map(([, b]) => b));
  }

  async #prune(nowMs: number): Promise<void> {
    this.#lastPrune = nowMs;
    const cutoffs: Partial<Record<Interval, number>> = {};
    for (const [every, keep] of Object.entries(RETENTION_MS) as Array<[Interval, number]>)
      if (Number.isFinite(keep)) cutoffs[every] = nowMs - keep;
    await this.#o.store.prune(cutoffs);
  }
}

const bySpaceThenMinute = (a: PresenceMinuteRow, b: PresenceMinuteRow): number =>
  a.spaceId < b.spaceId ? -1 : a.spaceId > b.spaceId ? 1 : a.minuteMs - b.minuteMs;
const bySensorThenMinute = (a: TrafficMinuteRow, b: TrafficMinuteRow): number =>
  a.sensorId < b.sensorId ? -1 : a.sensorId > b.sensorId ? 1 : a.minuteMs - b.minuteMs;
