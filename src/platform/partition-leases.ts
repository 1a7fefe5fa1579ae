import { systemClock } from '../core/clock.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { AppError, ErrorCodes, isAppError } from '../core/errors.js';
import { ValueCounts } from '../core/value-counts.js';
import { floorToMinute, MINUTE_MS } from '../core/time.js';
import { parseHiveTopic } from '../core/topics.js';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { CloudPipeline, type CloudCounters, type IngestPipelines, type PipelineOptions } from '../cloud/pipeline.js';
import type { UplinkAck } from '../proto/messages.js';
import type { Store } from '../store/port.js';
import type { Fence } from '../store/postgres-session.js';
import type { PostgresLeases } from '../store/postgres-leases.js';
import { floorPartition, partitionOfFloor, type IngestPartition } from './ingest-partition.js';

/**
 * Failover of the floor partitions (docs/scale-out.md, Failover): an ingest process aggregates
 * the partitions whose lease it holds in the shared store, each with a pipeline of its own over
 * a fenced store (its writes commit only while the lease holds its token), and stands by for the
 * rest. Every `leaseMs / 3` (wall time) it renews its leases and takes any partition whose lease
 * expired: its own (`--partition j/k`) at once, another's once that one stopped renewing, and one
 * nobody ever held only after a lease of its own uptime (its process may still be starting). A
 * partition taken over resumes from the stored pipeline state exactly as a restarted process
 * does (`CloudPipeline` recovery): the same minutes, rollups and events. Storing and acking stay
 * anyone's: a batch of a floor this process does not aggregate is stored by its standby pipeline
 * and left to the owner, as before.
 */
export const DEFAULT_LEASE_MS = 10_000;
/** Below this a lease would expire between two renewals of a merely busy process. */
export const MIN_LEASE_MS = 1_000;
export const MAX_LEASE_MS = 600_000;

/** One partition as this process sees it, for /metrics, the health endpoint and the log. */
export interface OwnedPartition {
  partition: string;
  token: number;
  /** Wall ms since the lease was last renewed (or taken). */
  leaseAgeMs: number;
}

export interface LeaseStatus {
  owner: string;
  leaseMs: number;
  /** In the protocol: the last lease round succeeded within a lease. */
  ready: boolean;
  owned: OwnedPartition[];
  /** Uplink batches received and not yet stored (queued behind the pipelines' chains). */
  batchesBehind: number;
  /** Aggregation writes refused because the lease had been taken (fencing). */
  fencedWrites: number;
}

export interface LeasedPipelinesOptions {
  /** Everything a pipeline needs but its store and partition. */
  base: Omit<PipelineOptions, 'store' | 'partition' | 'aggregates'>;
  /** The process's own (unfenced) store: the standby pipeline stores through it. */
  store: Store;
  /** `--partition j/k`: k partitions, j this process's own. */
  partition: IngestPartition;
  leases: PostgresLeases;
  /** A store whose aggregation writes are fenced by this token. */
  openFenced(fence: Fence): Promise<Store>;
  leaseMs: number;
  /** After a partition's pipeline finished (every shard done): its mark in the store, through its fenced store. */
  onPartitionFinished?(partition: string, store: Store): Promise<void>;
  /** One line per ownership change. */
  log?(line: string): void;
}

interface Held {
  index: number;
  label: string;
  token: number;
  pipeline: CloudPipeline;
  store: Store;
  /** systemClock.now() of the last successful renewal. */
  renewedAt: number;
}

export class LeasedPipelines implements IngestPipelines {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  readonly #o: LeasedPipelinesOptions;
  readonly #standby: CloudPipeline;
  readonly #held = new Map<number, Held>();
  /** Tallies of pipelines this process no longer runs (their batches were stored all the same). */
  readonly #retired: CloudCounters[] = [];
  readonly #retiredLatencies = new ValueCounts();
  #timer: NodeJS.Timeout | null = null;
  #round: Promise<void> = Promise.resolve();
  #startedAt = systemClock.now();
  #lastRoundOk = -Infinity;
  #finished = false;
  #closed = false;
  #behind = 0;
  #fenced = 0;
  #floorOfSerial = new Map<string, string>();
  /** A failure of a partition's catch-up (not a lost lease): raised by the next advance or finish. */
  #failure: unknown = undefined;
  /** The first instant of the shards' clock in each minute (one number a simulated minute): a taken-over partition's missed recomputes. */
  readonly #minuteTicks: number[] = [];
  #catalogueVersion = -1;

  constructor(o: LeasedPipelinesOptions) {
    this.#o = o;
    this.#standby = new CloudPipeline({
      ...o.base,
      store: o.store,
      partition: floorPartition(o.partition),
      aggregates: false,
    });
  }

  /** The first lease round (its own partition taken when free), then one every third of a lease. */
  async start(): Promise<void> {
    this.#startedAt = systemClock.now();
    await this.#leaseRound();
    this.#timer = setInterval(
      () => {
        // One round at a time: a slow database must not pile rounds up.
        this.#round = this.#round.then(() => this.#leaseRound());
      },
      Math.max(100, Math.floor(this.#o.leaseMs / 3)),
    );
    this.#timer.unref();
  }

  status(): LeaseStatus {
    const now = systemClock.now();
    return {
      owner: this.owner,
      leaseMs: this.#o.leaseMs,
      ready: !this.#closed && now - this.#lastRoundOk <= this.#o.leaseMs,
      owned: [...this.#held.values()]
        .sort((a, b) => a.index - b.index)
        .map((h) => ({ partition: h.label, token: h.token, leaseAgeMs: Math.round(now - h.renewedAt) })),
      batchesBehind: this.#behind,
      fencedWrites: this.#fenced,
    };
  }

  async #leaseRound(): Promise<void> {
    if (this.#closed) return;
    const { leases, leaseMs, partition } = this.#o;
    try {
      for (const h of [...this.#held.values()]) {
        if (await leases.renew(h.label, this.owner, h.token, leaseMs)) h.renewedAt = systemClock.now();
        else this.#drop(h, 'its lease was taken by another ingest process');
      }
      // Our own partition first, then the others in order.
      const order = [
        partition.index,
        ...Array.from({ length: partition.count }, (_, i) => i + 1).filter((i) => i !== partition.index),
      ];
      const settled = systemClock.now() - this.#startedAt >= leaseMs;
      for (const index of order) {
        if (this.#held.has(index) || this.#closed) continue;
        const label = `${index}/${partition.count}`;
        const token = await leases.acquire(label, this.owner, leaseMs, index === partition.index || settled);
        if (token !== null) await this.#adopt(index, label, token);
      }
      this.#lastRoundOk = systemClock.now();
    } catch {
      // The database is away (a restart): the fence keeps our writes safe meanwhile; the next round tries again.
    }
  }

  async #adopt(index: number, label: string, token: number): Promise<void> {
    const store = await this.#o.openFenced({ partition: label, token });
    // Recovers the partition from its stored state (the pipeline's constructor queues it first).
    const pipeline = new CloudPipeline({
      ...this.#o.base,
      store,
      partition: floorPartition({ index, count: this.#o.partition.count }),
    });
    const held: Held = { index, label, token, pipeline, store, renewedAt: systemClock.now() };
    // Queued on the pipeline's chain before it is held, so before any advance of the shards' clock.
    const from = await this.#replayFrom(store, label);
    const caughtUp = this.#catchUp(
      held,
      this.#minuteTicks.filter((t) => t >= from),
    );
    this.#held.set(index, held);
    this.#o.log?.(`partition ${label} acquired (lease token ${token})`);
    // Not awaited: the lease round must go on renewing while the partition catches up.
    const settled = this.#onHeld(held, () => caughtUp, undefined).then(() =>
      this.#finished ? this.#finishOne(held) : undefined,
    );
    settled.catch((err: unknown) => (this.#failure ??= err));
  }

  /**
   * Where a partition's replayed per-minute recomputes start: the first recompute of its first
   * open minute (its stored horizon + 1 minute), so each open minute's revisions are numbered
   * from 0 as its owner numbered them (those already stored are not written twice: one row per
   * event id). They are replayed at the instants of the shards' clock this process saw first in
   * each minute since (`#minuteTicks`): every ingest process follows the same clock channel, so
   * these are the instants its owner recomputed at.
   */
  async #replayFrom(store: Store, label: string): Promise<number> {
    // A partition its last owner finished has nothing left to recompute.
    if ((await store.getState(`shards_done ${label}`)) !== undefined) return Infinity;
    const finalised = await store.getState(`finalised_before ${label}`);
    if (finalised === undefined || finalised >= Number.MAX_SAFE_INTEGER) return Infinity;
    return finalised + MINUTE_MS;
  }

  /**
   * Runs those recomputes one after the other, as the owner would have: each sees only what
   * was received before it (recovered payloads are fed at their reception), so every minute
   * gets the revisions, and the outbox the events, one process emits. Without them the series
   * would be exact but the window's repeated events of the missed minutes would be missing.
   * Called synchronously: every advance is queued before any later one.
   */
  #catchUp(h: Held, ticks: readonly number[]): Promise<void> {
    return Promise.all(ticks.map((t) => h.pipeline.advance(t))).then(() => undefined);
  }

  /** Stops aggregating a partition: its pipeline's queued work runs out against the fence, then its store closes. */
  #drop(h: Held, why: string): void {
    if (this.#held.get(h.index) !== h) return;
    this.#held.delete(h.index);
    this.#o.log?.(`partition ${h.label} lost: ${why}`);
    void h.pipeline.idle().then(async () => {
      this.#retired.push(h.pipeline.counters());
      this.#retiredLatencies.addAll(h.pipeline.latenciesMs());
      await h.store.close().catch(() => undefined);
    });
  }

  /** Runs `op` on a held partition's pipeline; a refused (fenced) write drops the partition instead of failing the process. */
  async #onHeld<T>(h: Held, op: () => Promise<T>, onLost: T): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!isAppError(err, ErrorCodes.LEASE_LOST)) throw err;
      this.#fenced++;
      this.#drop(h, err.message);
      return onLost;
    }
  }

  #partitionOf(topic: string): number | null {
    const serial = parseHiveTopic(topic)?.serial;
    if (serial === undefined) return null;
    const catalogue: AssetCatalogue = this.#o.base.catalogue;
    if (catalogue.ingestVersion !== this.#catalogueVersion) {
      this.#catalogueVersion = catalogue.ingestVersion;
      this.#floorOfSerial = new Map(catalogue.all('hive').map((h) => [h.serial, h.floorId]));
    }
    const floorId = this.#floorOfSerial.get(serial);
    return floorId === undefined ? null : partitionOfFloor(this.#o.partition.count, floorId);
  }

  async handleMessage(topic: string, payload: Uint8Array): Promise<UplinkAck | null> {
    const index = this.#partitionOf(topic);
    const h = index === null ? undefined : this.#held.get(index);
    this.#behind++;
    try {
      // A refused write leaves the batch unacked: the hive sends it again, to whoever holds the floor by then.
      return h
        ? await this.#onHeld(h, () => h.pipeline.handleMessage(topic, payload), null)
        : await this.#standby.handleMessage(topic, payload);
    } finally {
      this.#behind--;
    }
  }

  handleHeartbeat(topic: string, payload: Uint8Array): Promise<void> {
    return this.#standby.handleHeartbeat(topic, payload);
  }

  #check(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  async advance(nowMs: number): Promise<void> {
    this.#check();
    if (floorToMinute(nowMs) > floorToMinute(this.#minuteTicks.at(-1) ?? -Infinity)) this.#minuteTicks.push(nowMs);
    await Promise.all([
      this.#standby.advance(nowMs),
      ...[...this.#held.values()].map((h) => this.#onHeld(h, () => h.pipeline.advance(nowMs), undefined)),
    ]);
  }

  /** Every shard said done: each held partition finalises every minute; a partition taken later is finished when taken. */
  async finish(): Promise<void> {
    this.#check();
    this.#finished = true;
    await Promise.all([...this.#held.values()].map((h) => this.#finishOne(h)));
  }

  async #finishOne(h: Held): Promise<void> {
    await this.#onHeld(
      h,
      async () => {
        await h.pipeline.finish();
        await this.#o.onPartitionFinished?.(h.label, h.store);
        this.#o.log?.(`partition ${h.label} finished`);
      },
      undefined,
    );
  }

  async idle(): Promise<void> {
    await Promise.all([this.#standby.idle(), ...[...this.#held.values()].map((h) => h.pipeline.idle())]);
  }

  counters(): CloudCounters {
    const all = [
      this.#standby.counters(),
      ...[...this.#held.values()].map((h) => h.pipeline.counters()),
      ...this.#retired,
    ];
    const sum = { ...(all[0] as CloudCounters) };
    for (const c of all.slice(1)) for (const k of Object.keys(sum) as Array<keyof CloudCounters>) sum[k] += c[k];
    return sum;
  }

  latenciesMs(): ValueCounts {
    const out = new ValueCounts();
    out.addAll(this.#retiredLatencies);
    for (const h of this.#held.values()) out.addAll(h.pipeline.latenciesMs());
    return out;
  }

  /** Stops renewing, lets every lease go at once (a clean stop: another process takes over without waiting) and closes the fenced stores. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#round;
    await this.idle();
    for (const h of this.#held.values()) {
      await this.#o.leases.release(h.label, this.owner, h.token).catch(() => undefined);
      await h.store.close().catch(() => undefined);
    }
    this.#held.clear();
    await this.#o.leases.close();
  }
}

/** `--lease <ms>` as given (wall ms, bounded). */
export function parseLeaseMs(text: string): number {
  const n = Number(text);
  if (!/^\d{1,7}$/.test(text) || n < MIN_LEASE_MS || n > MAX_LEASE_MS)
    throw new AppError(
      ErrorCodes.USAGE,
      `--lease-ms must be an integer from ${MIN_LEASE_MS} to ${MAX_LEASE_MS} (wall milliseconds), got ${JSON.stringify(text)}`,
    );
  return n;
}
