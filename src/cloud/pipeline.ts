import type { Clock } from '../core/clock.js';
import { ValueCounts } from '../core/value-counts.js';
import { floorToMinute, MINUTE_MS } from '../core/time.js';
import { ErrorCodes } from '../core/errors.js';
import { uplinkTopic } from '../core/topics.js';
import { decodeUplink, encodeUplink } from '../proto/codec.js';
import type { UplinkAck, WirePacket } from '../proto/messages.js';
import { eventId, type SensorEvent } from './events.js';
import { inspectHeartbeat } from './heartbeat.js';
import { checkPacket, inspectUplink, packetJson } from './ingest.js';
import { isRefused, LateAdmission, LATE_MINUTES_PER_BATCH, LATE_MINUTES_PER_HIVE_HOUR } from './late-admission.js';
import { PresenceKernel } from './kernel/presence-kernel.js';
import { PacketKind, ReadStatus, UplinkReader } from './kernel/uplink-reader.js';
import { Recompute, type RecomputeCounters } from './recompute.js';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { buildRegistry, type AssetRegistry } from './registry.js';
import type { OccupancyEvent, Store, StoredPayload } from '../store/port.js';
import type { DeliveryInsert } from '../store/webhook-port.js';
import { TrafficAggregator } from './traffic.js';
import type { DeadLetter } from '../store/rows.js';

/**
 * The cloud's processing, without sockets: message in → validated, deduplicated, stored in
 * one transaction, aggregated → the ack to publish (or null). The MQTT adapter feeds it and
 * publishes what it resolves to; tests call it directly. The store is asynchronous (a network
 * store may sit behind it), so every operation (message, heartbeat, advance, finish) runs on
 * one chain, in the order it was called, each awaiting its writes before the next starts: the
 * stored result is the same as if each ran to completion on arrival, whatever the adapter. Decode, validation and presence run on
 * the typed-array hot path (`kernel/`: `UplinkReader`, `PresenceKernel`) that
 * `npm run bench -- pipeline` measures; a message the hot path does not find clean is
 * explained by `inspectUplink` (dead letters with reasons).
 */
export interface CloudCounters extends RecomputeCounters {
  batchesReceived: number;
  batchesProcessed: number;
  duplicateBatches: number;
  packetsProcessed: number;
  /** Packets of batches stored before this start (a resumed run sends them again; they are not processed twice). */
  packetsStoredBefore: number;
  deadLettered: number;
}

export interface PipelineOptions {
  /** The platform's assets: ingest tables follow its changes (a sensor created through the API is accepted at once). */
  catalogue: AssetCatalogue;
  /** Sampling grid of the sensors (every sensing instant is a multiple of it). */
  tickMs: number;
  store: Store;
  clock: Clock;
  /** A minute is finalised once its end is at least this far behind the time passed to advance(). */
  lookbackMs: number;
  /** IANA zone of the site holding a space (rollup buckets); default UTC. */
  zoneOf?: (spaceId: string) => string;
  /** Listener of the internal occupancy event stream (the outbox table holds them too). */
  onEvent?: (e: OccupancyEvent) => void;
  /**
   * Listener of DETECTIONS and TRAFFIC events (spec §6), one per accepted packet, on the
   * internal stream only: they are not written to the outbox (docs/occupancy.md, Events).
   */
  onSensorEvent?: (e: SensorEvent) => void;
  /**
   * When given, `onSensorEvent` hears a message's events only while this says so (the live
   * page while a browser watches it): otherwise they are not even built.
   */
  sensorEventsWanted?: () => boolean;
  /**
   * Webhook deliveries of a message's DETECTIONS and TRAFFIC events (in packet order), written
   * in the batch's own transaction (`BatchWrite.deliveries`): enqueued exactly when the batch is stored.
   */
  sensorDeliveries?: (events: readonly SensorEvent[], receivedAtMs: number) => DeliveryInsert[];
  /**
   * Floor partition (docs/scale-out.md, several ingest processes): this pipeline stores, dedupes
   * and acks every batch it receives, but aggregates only the floors it owns. A batch of another
   * floor is left to that floor's owner, which reads it back from the shared store before each
   * new minute's recompute (`advance`) and at `finish`, so every space's minutes are computed
   * from all its sensors in one process. Absent: every floor (one process).
   */
  partition?: FloorPartition;
  /**
   * False: a standby ingest process that owns no partition (docs/scale-out.md, Failover): it
   * stores, dedupes, acks and marks reopened minutes for the owners, aggregates nothing and
   * reloads nothing. Default true.
   */
  aggregates?: boolean;
  /**
   * An ingest process following simulator shards' clocks (docs/scale-out.md): a batch counts as
   * received at the instant its hive sent it (its `sentAtMs`, the shard's clock at its flush, the
   * instant one process would have stamped), not at this process's clock, which follows the
   * slowest shard's last tick. Bounded by the clock: never before it, at most an hour ahead
   * (shards run at their own pace: the fastest may be minutes ahead of the slowest).
   */
  receivedAtSent?: boolean;
  /**
   * The run's tallies so far (`IngestTally`): a successor of a killed ingest (the ingest_kill
   * fault, platform/ingest-kills.ts) carries them on. Absent: a new tally.
   */
  tally?: IngestTally;
  /**
   * False while the store is away (the store_restart fault, platform/store-restarts.ts): a batch
   * is answered with the acked progress as it stands (the hive sends it again after its ack
   * timeout, docs/protocol.md §6), heartbeats are held until the store is back, and minutes are
   * finalised once it is. Absent: always there.
   */
  storeAvailable?: () => boolean;
}

/**
 * What the run counts of its ingest, as opposed to what the ingest process remembers: the
 * counters, latencies and each hive's progress when the run first heard from it (what was stored
 * before the run, counted once however often it comes again). A killed ingest loses its memory
 * (open minutes, caches, late budgets) but not the run's accounting, as a fleet's ledger
 * survives a process in its hives' acks (docs/scale-out.md, report merge).
 */
export interface IngestTally {
  readonly counters: Omit<CloudCounters, keyof RecomputeCounters>;
  readonly latencies: ValueCounts;
  readonly ackedAtStart: Map<string, number>;
  readonly countedBefore: Map<string, Uint8Array | Set<number>>;
  /** The recompute counters of the ingest processes before this one. */
  readonly earlier: RecomputeCounters;
}

function newIngestTally(): IngestTally {
  return {
    counters: {
      batchesReceived: 0,
      batchesProcessed: 0,
      duplicateBatches: 0,
      packetsProcessed: 0,
      packetsStoredBefore: 0,
      deadLettered: 0,
    },
    latencies: new ValueCounts(),
    ackedAtStart: new Map(),
    countedBefore: new Map(),
    earlier: { eventsEmitted: 0, lateInWindow: 0, lateBeyondWindow: 0 },
  };
}

/** Writes held while the store is away: one heartbeat per topic (the latest replaces the stored status anyway) and dead letters. */
const MAX_HELD_WRITES = 100_000;

/** How far ahead of the process's clock a batch's send instant is believed (`receivedAtSent`): a hive's claim is bounded. */
const SENT_AHEAD_MAX_MS = 60 * MINUTE_MS;

function sentInstant(clockAtMs: number, sentAtMs: number): number {
  return Math.min(Math.max(clockAtMs, sentAtMs), clockAtMs + SENT_AHEAD_MAX_MS);
}

/** What the cloud needs of its pipeline(s): a `CloudPipeline`, or the set of an ingest process with partition leases (platform/partition-leases.ts). */
export interface IngestPipelines {
  handleMessage(topic: string, payload: Uint8Array): Promise<UplinkAck | null>;
  handleHeartbeat(topic: string, payload: Uint8Array): Promise<void>;
  advance(nowMs: number): Promise<void>;
  finish(): Promise<void>;
  idle(): Promise<void>;
  counters(): CloudCounters;
  latenciesMs(): ValueCounts;
  close?(): Promise<void>;
  /** The ingest_kill fault (`CloudPipeline.dying`); absent: these pipelines cannot be killed (partition leases). */
  dying?(): void;
  /** The run's tally for a killed ingest's successor (`CloudPipeline.retire`). */
  retire?(): IngestTally;
}

/** Which ingest process aggregates a floor (platform/ingest-partition.ts). */
export interface FloorPartition {
  /** This process's partition, e.g. `1/2`: the suffix of its pipeline state keys. */
  self: string;
  /** The partition that aggregates the floor. */
  ownerOf(floorId: string): string;
}

/**
 * State key of a partition's promise: it pulls every stored packet of its floors sensed from
 * this minute on before it finalises anything at or after it (see `#pullOwnFloors`).
 */
const horizonKey = (partition: string): string => `pull_horizon ${partition}`;

// A local copy: an imported binding is a property read per use under some loaders.
const PRESENCE: number = PacketKind.Presence;

type Read =
  | { ok: false; deadLetter: DeadLetter }
  | {
      ok: true;
      serial: string;
      seq: number;
      sentAtMs: number;
      packetCount: number;
      deadLetters: readonly DeadLetter[];
    };

const KIND_BOTH = 3;

/**
 * Packets read or re-read between two turns of the event loop. The store answers on this
 * thread (SQLite) with settled promises, so the chain would otherwise run every queued message
 * in one go: a flood kept the API unanswered for 60 s (issue 33 item 7). About 5 ms of work.
 */
const WORK_PER_TURN = 4096;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Past this acked progress a hive's counted seqs are a set, not a bitset sized by the progress (2 MB). */
const MAX_BITSET_SEQ = 1 << 24;

export class CloudPipeline {
  readonly #o: PipelineOptions;
  #registry: AssetRegistry;
  #reader: UplinkReader;
  /** Re-reads stored payloads (late data, recovery) without disturbing the message in hand. */
  #reloader: UplinkReader;
  #presence: PresenceKernel;
  /** The catalogue version the ingest tables were built from. */
  #builtFrom: number;
  readonly #traffic = new TrafficAggregator();
  /** The run's counters, latencies and stored-before progress (`IngestTally`). */
  readonly #tally: IngestTally;
  readonly #latencies: ValueCounts;
  readonly #counters: IngestTally['counters'];
  /** Each hive's acked progress in the store when the run first heard from it. */
  readonly #ackedAtStart: Map<string, number>;
  /**
   * Per hive, the seqs up to its acked progress at start already counted as stored before (one
   * bit a seq): a resumed run's batch arriving twice (a redelivery, a retransmission) is one
   * batch the earlier run stored, not two.
   */
  readonly #countedBefore: Map<string, Uint8Array | Set<number>>;
  /** Dying (ingest_kill): each hive's progress as acked before, which every ack now repeats. */
  #frozenAcks: Map<string, number> | null = null;
  /** Writes that came while the store was away (heartbeats by topic, dead letters), made once it is back. */
  readonly #held = new Map<string, () => Promise<void>>();
  /** The last acked progress this process sent each hive: what it answers while the store is away. */
  readonly #lastAcked = new Map<string, number>();
  readonly #recompute: Recompute;
  /** A partitioned pipeline's last minute pulled from the store (see `partition`). */
  #pulledMinute = -Infinity;
  /** The tail of the operation chain (crash recovery first); never rejects, so one failure does not stop the chain. */
  #tail: Promise<unknown>;
  /** Packets handled since the chain last let the event loop turn (`WORK_PER_TURN`). */
  #work = 0;
  readonly #late = new LateAdmission();
  /**
   * Crash recovery's payloads not fed yet, by `serial|seq`, in arrival order, and the instant
   * their packets are read from. A restarted process computes the window it reloads as it was
   * computed before the crash only if each payload is fed when it was first: once the clock
   * passes its reception, or when its batch comes again (a resumed run replays its start), so a
   * replayed minute sees no data received after it and emits the values (and revisions) it did.
   */
  readonly #pending = new Map<string, StoredPayload>();
  /** The same payloads by reception (stable: arrival order among equals), and the next one not yet due. */
  #pendingByTime: Array<[string, StoredPayload]> = [];
  #pendingNext = 0;
  #pendingFrom = 0;

  /** Resumes from the store: payloads of minutes not yet finalised are re-read (crash recovery) before the first operation. */
  constructor(opts: PipelineOptions) {
    this.#o = opts;
    this.#tally = opts.tally ?? newIngestTally();
    this.#counters = this.#tally.counters;
    this.#latencies = this.#tally.latencies;
    this.#ackedAtStart = this.#tally.ackedAtStart;
    this.#countedBefore = this.#tally.countedBefore;
    this.#builtFrom = opts.catalogue.ingestVersion;
    this.#registry = buildRegistry(opts.catalogue.snapshot());
    this.#reader = new UplinkReader(this.#registry);
    this.#reloader = new UplinkReader(this.#registry);
    this.#presence = this.#newPresenceKernel();
    this.#recompute = new Recompute({
      store: opts.store,
      presence: this.#presence,
      traffic: this.#traffic,
      lookbackMs: opts.lookbackMs,
      zoneOf: opts.zoneOf ?? (() => 'UTC'),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
      // Each partition's own horizon: another process's finalisation says nothing of our floors.
      ...(opts.partition ? { stateKeySuffix: ` ${opts.partition.self}` } : {}),
    });
    this.#tail = opts.aggregates === false ? Promise.resolve() : this.#recover();
  }

  async #recover(): Promise<void> {
    await this.#recompute.load();
    this.#pendingFrom = this.#recompute.recoverFrom();
    for (const p of await this.#o.store.payloadsSensedIn(this.#pendingFrom, Number.MAX_SAFE_INTEGER))
      this.#pending.set(`${p.hiveSerial}|${p.seq}`, p);
    this.#pendingByTime = [...this.#pending].sort(([, a], [, b]) => a.receivedAtMs - b.receivedAtMs);
  }

  /** Feeds the recovered payloads received before `beforeMs` (`#pending`); each call walks on from the last. */
  async #feedPending(beforeMs: number): Promise<void> {
    const byTime = this.#pendingByTime;
    while (this.#pendingNext < byTime.length) {
      const [key, p] = byTime[this.#pendingNext] as [string, StoredPayload];
      if (!(p.receivedAtMs < beforeMs)) return;
      this.#pendingNext++;
      // Fed already when its batch came again.
      if (this.#pending.has(key)) await this.#feedRecovered(key, p);
    }
    // All fed: the payloads are released.
    this.#pendingByTime = [];
    this.#pendingNext = 0;
  }

  /** One recovered payload into the aggregators, as `#reload` reads it; its minutes revise what was computed. */
  async #feedRecovered(key: string, p: StoredPayload): Promise<void> {
    this.#pending.delete(key);
    await this.#breathe();
    const r = this.#reloader;
    if (!this.#owns(p.hiveSerial) || !this.#read(r, uplinkTopic(p.hiveSerial), p.payload, 0).ok) return;
    this.#work += r.count;
    for (let i = 0; i < r.count; i++) {
      const t = r.sensedAt[i] as number;
      if ((r.sensor[i] as number) < 0 || t < this.#pendingFrom) continue;
      this.#recompute.noteArrival(floorToMinute(t), true);
      this.#feed(r, i);
    }
  }

  /** Runs `op` after every operation called before it; its result (or failure) is the caller's. */
  #serial<T>(op: () => Promise<T>): Promise<T> {
    const step = async (): Promise<T> => {
      await this.#breathe();
      return op();
    };
    const run = this.#tail.then(step, step);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Lets the event loop turn (the API, the broker's sockets) once enough work is done. */
  async #breathe(): Promise<void> {
    if (this.#work < WORK_PER_TURN) return;
    this.#work = 0;
    await nextTurn();
  }

  /** Resolves once every operation called so far has finished (failed ones included). */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }

  #newPresenceKernel(): PresenceKernel {
    return new PresenceKernel(
      this.#registry,
      this.#reader.sensorIds,
      this.#registry.assets.floors.map((f) => f.id),
      this.#o.tickMs,
    );
  }

  /**
   * After a catalogue change: ingest tables rebuilt from the new assets, and the presence
   * data of every open minute re-read from the store into the new kernel (as crash recovery
   * does), so nothing received is lost and later packets of new sensors are accepted.
   * Traffic minutes are keyed by sensor id and survive as they are.
   */
  async #followCatalogue(): Promise<void> {
    if (this.#o.catalogue.ingestVersion === this.#builtFrom) return;
    this.#builtFrom = this.#o.catalogue.ingestVersion;
    this.#registry = buildRegistry(this.#o.catalogue.snapshot());
    this.#reader = new UplinkReader(this.#registry);
    this.#reloader = new UplinkReader(this.#registry);
    this.#presence = this.#newPresenceKernel();
    this.#recompute.replacePresence(this.#presence);
    await this.#reload(this.#recompute.recoverFrom(), Number.MAX_SAFE_INTEGER, PRESENCE);
  }

  /**
   * Handles one message from an uplink subscription; resolves to the ack to publish, if any,
   * once the batch is stored. The message counts as received now (the clock is read at the call).
   */
  handleMessage(topic: string, payload: Uint8Array): Promise<UplinkAck | null> {
    const receivedAtMs = this.#o.clock.now();
    return this.#serial(() => this.#handleMessage(topic, payload, receivedAtMs));
  }

  async #handleMessage(topic: string, payload: Uint8Array, clockAtMs: number): Promise<UplinkAck | null> {
    const { store } = this.#o;
    if (!(await this.#storeThere())) return this.#answerAway(topic, payload, clockAtMs);
    await this.#followCatalogue();
    this.#counters.batchesReceived++;
    const v = this.#read(this.#reader, topic, payload, clockAtMs);
    if (v.ok && this.#frozenAcks && !this.#frozenAcks.has(v.serial))
      this.#frozenAcks.set(v.serial, await store.ackedSeq(v.serial));
    if (!v.ok) {
      await store.writeDeadLetter(v.deadLetter);
      this.#counters.deadLettered++;
      return null;
    }
    const receivedAtMs = this.#o.receivedAtSent === true ? sentInstant(clockAtMs, v.sentAtMs) : clockAtMs;
    let ackedAtStart = this.#ackedAtStart.get(v.serial);
    if (ackedAtStart === undefined) this.#ackedAtStart.set(v.serial, (ackedAtStart = await store.ackedSeq(v.serial)));
    // A retransmission (lost ack, or QoS 1 redelivery): already stored, so only re-ack.
    if (await store.hasBatch(v.serial, v.seq)) {
      const recovered = this.#pending.get(`${v.serial}|${v.seq}`);
      if (recovered) await this.#feedRecovered(`${v.serial}|${v.seq}`, recovered);
      return this.#duplicate(v.serial, v.seq, v.packetCount, ackedAtStart, receivedAtMs);
    }
    await this.#feedPending(receivedAtMs + 1);
    const late = this.#admitLate(v.serial, v.seq, topic, payload, receivedAtMs);
    const r = this.#reader;
    const ackedSeq = await this.#nextAckedSeq(v.serial, v.seq);
    const accepted = r.count - r.rejected;
    const listen = this.#o.onSensorEvent !== undefined && (this.#o.sensorEventsWanted?.() ?? true);
    const events = listen || this.#o.sensorDeliveries ? this.#sensorEvents(r) : [];
    const deliveries =
      this.#o.sensorDeliveries && events.length > 0 ? this.#o.sensorDeliveries(events, receivedAtMs) : [];
    const stored = await store.writeBatch({
      hiveSerial: v.serial,
      seq: v.seq,
      sentAtMs: v.sentAtMs,
      receivedAtMs,
      ackedSeq,
      packetCount: v.packetCount,
      raw:
        accepted > 0
          ? { payload: late?.payload ?? payload, minSensedMs: r.minSensedMs, maxSensedMs: r.maxSensedMs }
          : null,
      deadLetters: late ? [...v.deadLetters, ...late.deadLetters] : v.deadLetters,
      sensorsSeen: lastSeen(r),
      ...(deliveries.length > 0 ? { deliveries } : {}),
    });
    // Another ingest process on the store stored it since `hasBatch`: a duplicate all the same.
    if (!stored) return this.#duplicate(v.serial, v.seq, v.packetCount, ackedAtStart, receivedAtMs);
    this.#counters.batchesProcessed++;
    this.#counters.deadLettered += v.deadLetters.length + (late?.deadLetters.length ?? 0);
    if (this.#owns(v.serial)) await this.#aggregate(receivedAtMs);
    else {
      // Stored for its floor's owner (another process), which aggregates it from the store.
      this.#counters.packetsProcessed += accepted;
      await this.#markReopenedMinutes(v.serial);
    }
    if (listen && this.#o.onSensorEvent) for (const e of events) this.#o.onSensorEvent(e);
    return this.#answer({ hiveSerial: v.serial, ackedSeq, ackedAtMs: receivedAtMs });
  }

  /** The ack as sent: a dying process's repeats the progress acked before (`dying`). */
  #answer(ack: UplinkAck): UplinkAck {
    const frozen = this.#frozenAcks?.get(ack.hiveSerial);
    const sent = frozen === undefined ? ack : { ...ack, ackedSeq: frozen };
    this.#lastAcked.set(sent.hiveSerial, sent.ackedSeq);
    return sent;
  }

  /**
   * A batch while the store is away (store_restart): nothing can be stored, so the ack repeats
   * the hive's progress as this process last acked it (or as the run found it): not this batch,
   * which the hive sends again after its ack timeout (docs/protocol.md §6: acks only after a
   * durable write). A message that is no valid batch gets no ack, as ever; its dead letter waits.
   */
  #answerAway(topic: string, payload: Uint8Array, clockAtMs: number): UplinkAck | null {
    this.#counters.batchesReceived++;
    const v = this.#read(this.#reader, topic, payload, clockAtMs);
    if (!v.ok) {
      this.#hold(`dead ${this.#counters.batchesReceived}`, () => this.#deadLetter(v.deadLetter));
      return null;
    }
    const atStart = this.#ackedAtStart.get(v.serial);
    const known = Math.max(this.#lastAcked.get(v.serial) ?? 0, atStart ?? 0);
    // At or below an acked progress the batch is stored: a duplicate, counted as one (`#duplicate`),
    // since the ack releases it from the hive's buffer without its ever being read again.
    if (v.seq <= known) this.#countDuplicate(v.serial, v.seq, v.packetCount, atStart ?? 0);
    return this.#answer({ hiveSerial: v.serial, ackedSeq: known, ackedAtMs: clockAtMs });
  }

  async #deadLetter(d: DeadLetter): Promise<void> {
    await this.#o.store.writeDeadLetter(d);
    this.#counters.deadLettered++;
  }

  /** Holds a write for when the store is back (bounded: past the bound the oldest is dropped). */
  #hold(key: string, write: () => Promise<void>): void {
    this.#held.delete(key);
    this.#held.set(key, write);
    if (this.#held.size > MAX_HELD_WRITES) this.#held.delete(this.#held.keys().next().value as string);
  }

  /** Whether the store is there; when it is back, the writes held meanwhile go first, in arrival order. */
  async #storeThere(): Promise<boolean> {
    if (this.#o.storeAvailable?.() === false) return false;
    if (this.#held.size === 0) return true;
    const held = [...this.#held.values()];
    this.#held.clear();
    for (const write of held) await write();
    return true;
  }

  /**
   * Late-data admission of the message just read (late-admission.ts): when it would reopen more
   * finalised minutes than its hive's budget allows, the packets of the minutes beyond are
   * dead-lettered `LATE_BEYOND_BUDGET`, the rest is re-encoded (what is stored is what was
   * admitted, so recovery and reopening re-read exactly that) and read again into the reader.
   * Null when everything is admitted (the usual case: checked on the reader's arrays alone).
   */
  #admitLate(
    serial: string,
    seq: number,
    topic: string,
    payload: Uint8Array,
    receivedAtMs: number,
  ): { payload: Uint8Array; deadLetters: DeadLetter[] } | null {
    const r = this.#reader;
    const finalisedBefore = this.#recompute.finalisedBefore;
    if (!(floorToMinute(r.minSensedMs) < finalisedBefore)) return null;
    const needsReopen = (m: number, kind: number): boolean =>
      m < finalisedBefore && !(kind === PRESENCE ? this.#presence.hasMinute(m) : this.#traffic.hasMinute(m));
    const refused = this.#late.refuse(serial, receivedAtMs, r, floorToMinute, needsReopen);
    const hive = this.#registry.hiveBySerial(serial);
    if (refused.size === 0 || !hive) return null;
    const batch = decodeUplink(payload);
    const kept: WirePacket[] = [];
    const deadLetters: DeadLetter[] = [];
    batch.packets.forEach((p, i) => {
      const minuteMs = floorToMinute(p.sensedAtMs);
      // A packet the registry refused is dead-lettered already, with its own reason.
      if (
        !checkPacket(this.#registry, hive, p).ok ||
        !isRefused(refused, minuteMs, p.kind === 'presence' ? PRESENCE : PacketKind.Traffic)
      ) {
        kept.push(p);
        return;
      }
      const message = `${serial} seq ${seq} packets[${i}]: minute ${new Date(minuteMs).toISOString()} is finalised and the hive's budget of late minutes (${LATE_MINUTES_PER_BATCH} a batch, ${LATE_MINUTES_PER_HIVE_HOUR} an hour) is spent`;
      deadLetters.push({ receivedAtMs, topic, reason: ErrorCodes.LATE_BEYOND_BUDGET, message, payload: packetJson(p) });
    });
    const admitted = encodeUplink({ ...batch, packets: kept });
    this.#read(r, topic, admitted, receivedAtMs);
    return { payload: admitted, deadLetters };
  }

  /**
   * Handles one message from the heartbeat subscription: the hive's latest status and its
   * sensors' health replace the stored ones; rejected heartbeats and health entries are
   * dead-lettered with their reasons (`inspectHeartbeat`).
   */
  handleHeartbeat(topic: string, payload: Uint8Array): Promise<void> {
    const receivedAtMs = this.#o.clock.now();
    return this.#serial(async () => {
      if (await this.#storeThere()) return this.#heartbeat(topic, payload, receivedAtMs);
      this.#hold(`heartbeat ${topic}`, () => this.#heartbeat(topic, payload, receivedAtMs));
    });
  }

  async #heartbeat(topic: string, payload: Uint8Array, receivedAtMs: number): Promise<void> {
    const { store } = this.#o;
    await this.#followCatalogue();
    const v = inspectHeartbeat(this.#registry, { topic, payload, receivedAtMs });
    if (v.kind === 'rejected') return this.#deadLetter(v.deadLetter);
    await store.writeHeartbeat(v.status, v.sensors);
    for (const d of v.deadLetters) await store.writeDeadLetter(d);
    this.#counters.deadLettered += v.deadLetters.length;
  }

  /** At each new minute, recomputes the look-back window (events); finalises minutes leaving it. */
  advance(nowMs: number): Promise<void> {
    return this.#serial(async () => {
      // The store is away (store_restart): the minutes due now are finalised at the first advance once it is back.
      if (!(await this.#storeThere())) return;
      await this.#followCatalogue();
      if (this.#o.aggregates === false) return;
      // The recompute does its work at each new minute: what other processes stored for our floors comes in first.
      const minute = floorToMinute(nowMs);
      // Within one minute the recompute finalises minutes before (minute's last ms − look-back), floored.
      if (this.#o.partition && minute !== this.#pulledMinute)
        await this.#pullOwnFloors(minute, floorToMinute(minute + MINUTE_MS - 1 - this.#o.lookbackMs));
      // Received at this instant: before or after this advance, as its batch comes again (or at the next).
      await this.#feedPending(nowMs);
      await this.#recompute.advance(nowMs);
    });
  }

  /** Finalises every open minute (end of run); later data reopens its minute from the store. */
  finish(): Promise<void> {
    const nowMs = this.#o.clock.now();
    return this.#serial(async () => {
      if (this.#o.aggregates === false) return;
      // Finishing finalises every minute: whatever is stored later is beyond the horizon.
      if (this.#o.partition) await this.#pullOwnFloors(floorToMinute(nowMs), Number.MAX_SAFE_INTEGER);
      await this.#feedPending(Infinity);
      await this.#recompute.finish(nowMs);
    });
  }

  /**
   * A partitioned pipeline's own floors' stored packets of every minute not yet finalised, fed
   * again: a packet already fed changes nothing (`#feed`), so what another ingest process stored
   * for our floors is added and the rest stays as it was. Then the minutes other processes
   * marked (late data for a minute we may have finalised, `#markReopenedMinutes`) are reopened
   * from the store, as this process reopens a minute its own late data falls in.
   *
   * Why nothing falls between the two: before reading anything, the pull raises this
   * partition's horizon in the store to `finalisesBefore` (nothing at or after it is finalised
   * before the next pull). A process storing a batch of our floor reads the horizon after its
   * batch is committed. If it read the old one, our store read comes after its commit and the
   * batch's minutes (at or after the old horizon, so not finalised) are pulled; if it read the new
   * one, any minute before it is marked, and the marks are read at this pull or the next. A mark
   * is deleted before its minute is re-read (a mark written meanwhile has its batch committed
   * before that read) and after the reopened minute is persisted (a restart reloads it).
   */
  async #pullOwnFloors(minute: number, finalisesBefore: number): Promise<void> {
    const self = (this.#o.partition as FloorPartition).self;
    const { store } = this.#o;
    this.#pulledMinute = minute;
    const key = horizonKey(self);
    if (finalisesBefore > ((await store.getState(key)) ?? -Infinity)) await store.setState(key, finalisesBefore);
    const marks = await store.reopenMarks(self);
    const reopened = new Set<number>();
    for (const m of marks) {
      if (m.minuteMs >= this.#recompute.finalisedBefore || reopened.has(m.minuteMs)) continue;
      this.#recompute.noteArrival(
        m.minuteMs,
        this.#presence.hasMinute(m.minuteMs) || this.#traffic.hasMinute(m.minuteMs),
      );
      reopened.add(m.minuteMs);
    }
    await this.#recompute.persistReopened();
    await store.clearReopenMarks(marks);
    for (const m of [...reopened].sort((a, b) => a - b)) await this.#reload(m, m + MINUTE_MS, KIND_BOTH);
    // A new instant for a minute already computed revises it, as if it had arrived here.
    const from = Math.max(Number.MIN_SAFE_INTEGER, this.#recompute.finalisedBefore);
    await this.#reload(from, Number.MAX_SAFE_INTEGER, KIND_BOTH, (m) => this.#recompute.noteArrival(m, true));
  }

  /**
   * After storing a batch of a floor another process owns: the minutes of its packets before the
   * owner's horizon (read now, after the batch is committed) may be finalised there, so they are
   * marked for the owner to reopen (`#pullOwnFloors`). Rare: only data later than the look-back.
   */
  async #markReopenedMinutes(serial: string): Promise<void> {
    const hive = this.#registry.hiveBySerial(serial);
    if (!hive || !this.#o.partition) return;
    const owner = this.#o.partition.ownerOf(hive.floorId);
    const r = this.#reader;
    const horizon = (await this.#o.store.getState(horizonKey(owner))) ?? -Infinity;
    if (floorToMinute(r.minSensedMs) >= horizon) return;
    const minutes = new Set<number>();
    for (let i = 0; i < r.count; i++) {
      const minuteMs = floorToMinute(r.sensedAt[i] as number);
      if ((r.sensor[i] as number) >= 0 && minuteMs < horizon) minutes.add(minuteMs);
    }
    await this.#o.store.markReopen(
      [...minutes].sort((a, b) => a - b).map((minuteMs) => ({ owner, floorId: hive.floorId, minuteMs })),
    );
  }

  /** Whether this pipeline aggregates the hive's floor (always, unpartitioned). */
  #owns(serial: string): boolean {
    const p = this.#o.partition;
    if (this.#o.aggregates === false) return false;
    if (!p) return true;
    const hive = this.#registry.hiveBySerial(serial);
    return hive !== undefined && p.ownerOf(hive.floorId) === p.self;
  }

  counters(): CloudCounters {
    const [earlier, own] = [this.#tally.earlier, this.#recompute.counters];
    return {
      ...this.#counters,
      eventsEmitted: earlier.eventsEmitted + own.eventsEmitted,
      lateInWindow: earlier.lateInWindow + own.lateInWindow,
      lateBeyondWindow: earlier.lateBeyondWindow + own.lateBeyondWindow,
    };
  }

  /**
   * The ingest_kill fault (platform/ingest-kills.ts): from now on every batch is stored as ever
   * but answered with its hive's progress as acked before the first of them (the acks a process
   * killed before sending them never sent): the hives keep them until an ack covers them.
   */
  dying(): void {
    this.#frozenAcks ??= new Map();
  }

  /** The run's tally, this process's recompute counters added: for the successor of a killed ingest. Use this pipeline no more. */
  retire(): IngestTally {
    const c = this.counters();
    return {
      ...this.#tally,
      earlier: { eventsEmitted: c.eventsEmitted, lateInWindow: c.lateInWindow, lateBeyondWindow: c.lateBeyondWindow },
    };
  }

  latenciesMs(): ValueCounts {
    return this.#latencies;
  }

  /**
   * Reads a message into `reader`: the hot path when it is clean; otherwise `inspectUplink`
   * explains it (dead letters with reasons) and decides. Stored payloads are re-read with
   * the same function, so recovery accepts exactly what ingest accepted.
   */
  #read(reader: UplinkReader, topic: string, payload: Uint8Array, receivedAtMs: number): Read {
    const hive = reader.hiveOfTopic(topic);
    const status = reader.read(hive, payload);
    const serial = (): string => this.#registry.assets.hives[hive]?.serial ?? '';
    if (status === ReadStatus.Clean)
      return {
        ok: true,
        serial: serial(),
        seq: reader.seq,
        sentAtMs: reader.sentAtMs,
        packetCount: reader.count,
        deadLetters: [],
      };
    const v = inspectUplink(this.#registry, { topic, payload, receivedAtMs });
    if (v.kind === 'rejected') return { ok: false, deadLetter: v.deadLetter };
    // The reader's byte checks refused the header but the decoded text passed (a serial whose
    // UTF-8 decodes to the topic's from other bytes): take the decoded packets.
    if (status === ReadStatus.Message) reader.fill(hive, v.packets);
    return {
      ok: true,
      serial: v.hive.serial,
      seq: v.batch.seq,
      sentAtMs: v.batch.sentAtMs,
      packetCount: v.batch.packets.length,
      deadLetters: v.deadLetters,
    };
  }

  async #duplicate(
    serial: string,
    seq: number,
    packetCount: number,
    ackedAtStart: number,
    receivedAtMs: number,
  ): Promise<UplinkAck> {
    this.#countDuplicate(serial, seq, packetCount, ackedAtStart);
    return this.#answer({
      hiveSerial: serial,
      ackedSeq: await this.#nextAckedSeq(serial, seq),
      ackedAtMs: receivedAtMs,
    });
  }

  #countDuplicate(serial: string, seq: number, packetCount: number, ackedAtStart: number): void {
    this.#counters.duplicateBatches++;
    if (seq >= 1 && seq <= ackedAtStart && this.#firstCountBefore(serial, seq, ackedAtStart))
      this.#counters.packetsStoredBefore += packetCount;
  }

  /** True the first time a resumed run's `seq` ≤ the hive's progress at start comes: one bit a seq, a set past MAX_BITSET_SEQ. */
  #firstCountBefore(serial: string, seq: number, ackedAtStart: number): boolean {
    let seen = this.#countedBefore.get(serial);
    if (!seen)
      this.#countedBefore.set(
        serial,
        (seen = ackedAtStart <= MAX_BITSET_SEQ ? new Uint8Array((ackedAtStart >> 3) + 1) : new Set<number>()),
      );
    if (seen instanceof Set) {
      if (seen.has(seq)) return false;
      seen.add(seq);
      return true;
    }
    const mask = 1 << (seq & 7);
    if (((seen[seq >> 3] as number) & mask) !== 0) return false;
    seen[seq >> 3] = (seen[seq >> 3] as number) | mask;
    return true;
  }

  /**
   * Ack progress including `seq` (stored, or being stored): the contiguous run of stored
   * batches from the stored progress on. It fills the next gap with `seq`, and walks on over
   * batches another ingest process on the same store stored meanwhile (its progress write may
   * have seen less than ours), so a hive's ack never stalls on a batch stored elsewhere.
   */
  async #nextAckedSeq(serial: string, seq: number): Promise<number> {
    let acked = await this.#o.store.ackedSeq(serial);
    if (seq <= acked) return acked;
    while (acked + 1 === seq || (await this.#o.store.hasBatch(serial, acked + 1))) acked++;
    return acked;
  }

  async #aggregate(processedAtMs: number): Promise<void> {
    const r = this.#reader;
    for (let i = 0; i < r.count; i++) {
      if ((r.sensor[i] as number) < 0) continue;
      const t = r.sensedAt[i] as number;
      const minuteMs = floorToMinute(t);
      const presence = r.kind[i] === PRESENCE;
      const open = presence ? this.#presence.hasMinute(minuteMs) : this.#traffic.hasMinute(minuteMs);
      // Late data for a finalised minute: re-read everything stored for it (this batch
      // included, it was written first) so the recomputed minute is complete.
      if (this.#recompute.noteArrival(minuteMs, open)) {
        // Rare (data for a finalised minute): the only awaits of this loop.
        await this.#recompute.persistReopened();
        await this.#reload(minuteMs, minuteMs + MINUTE_MS, r.kind[i] as number);
      }
      this.#feed(r, i);
      this.#work++;
      this.#latencies.add(processedAtMs - t);
      this.#counters.packetsProcessed++;
    }
  }

  /** The DETECTIONS/TRAFFIC event of every accepted packet of the message read, in packet order. */
  #sensorEvents(r: UplinkReader): SensorEvent[] {
    const out: SensorEvent[] = [];
    for (let i = 0; i < r.count; i++) if ((r.sensor[i] as number) >= 0) out.push(this.#sensorEvent(r, i));
    return out;
  }

  #sensorEvent(r: UplinkReader, i: number): SensorEvent {
    const sensorId = r.sensorIds[r.sensor[i] as number] as string;
    const t = r.sensedAt[i] as number;
    if (r.kind[i] !== PRESENCE)
      return {
        eventId: eventId('TRAFFIC', sensorId, t, 0),
        type: 'TRAFFIC',
        sensorId,
        timestampMs: t,
        data: { in: r.inCount[i] as number, out: r.outCount[i] as number },
      };
    const transform = this.#registry.transform(sensorId);
    const local: Array<[number, number]> = [];
    const world: Array<[number, number]> = [];
    for (let d = r.detStart[i] as number; d < (r.detStart[i + 1] as number); d++) {
      local.push([r.xs[d] as number, r.ys[d] as number]);
      world.push(transform.toWorld(r.xs[d] as number, r.ys[d] as number) as [number, number]);
    }
    return {
      eventId: eventId('DETECTIONS', sensorId, t, 0),
      type: 'DETECTIONS',
      sensorId,
      timestampMs: t,
      data: { local, world },
    };
  }

  /** Feeds the stored packets sensed in [fromMs, toMs) of the given kinds (bit mask) to the aggregators; `onNew` hears the minute of each presence instant not held before. */
  async #reload(fromMs: number, toMs: number, kinds: number, onNew?: (minuteMs: number) => void): Promise<void> {
    const r = this.#reloader;
    for (const p of await this.#o.store.payloadsSensedIn(fromMs, toMs)) {
      // A recovered payload not yet due is fed at its time (`#pending`), not before.
      if (this.#pending.has(`${p.hiveSerial}|${p.seq}`)) continue;
      await this.#breathe();
      if (!this.#owns(p.hiveSerial) || !this.#read(r, uplinkTopic(p.hiveSerial), p.payload, 0).ok) continue;
      this.#work += r.count;
      for (let i = 0; i < r.count; i++) {
        const t = r.sensedAt[i] as number;
        if (
          (r.sensor[i] as number) >= 0 &&
          t >= fromMs &&
          t < toMs &&
          ((r.kind[i] as number) & kinds) !== 0 &&
          this.#feed(r, i)
        )
          onNew?.(floorToMinute(t));
      }
    }
  }

  /**
   * One accepted packet into its aggregator; a repeated (sensor, instant) changes nothing. True
   * for a presence instant not held before (presence minutes are cached once computed; traffic
   * minutes are recomputed every time).
   */
  #feed(r: UplinkReader, i: number): boolean {
    const sensor = r.sensor[i] as number;
    const t = r.sensedAt[i] as number;
    if (r.kind[i] === PRESENCE)
      return this.#presence.add(sensor, t, r.xs, r.ys, r.detStart[i] as number, r.detStart[i + 1] as number);
    this.#traffic.add(r.sensorIds[sensor] as string, t, { in: r.inCount[i] as number, out: r.outCount[i] as number });
    return false;
  }
}

/** Latest sensing instant per sensor with an accepted packet in the message read. */
function lastSeen(r: UplinkReader): Array<{ sensorId: string; lastSeenMs: number }> {
  const latest = new Map<number, number>();
  for (let i = 0; i < r.count; i++) {
    const s = r.sensor[i] as number;
    if (s >= 0 && !((latest.get(s) ?? -Infinity) >= (r.sensedAt[i] as number))) latest.set(s, r.sensedAt[i] as number);
  }
  return [...latest]
    .sort((a, b) => a[0] - b[0])
    .map(([s, t]) => ({ sensorId: r.sensorIds[s] as string, lastSeenMs: t }));
}
