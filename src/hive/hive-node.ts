import { restartInOutageDropsBatch } from './planted-defect.js';
import { rngFor, type Rng } from '../core/rng.js';
import { ValueCounts } from '../core/value-counts.js';
import type { FaultTimeline, Window } from '../mesh/faults.js';
import { encodeUplinkFrom, uplinkTrailerSize, UplinkPackets } from '../proto/uplink-wire.js';
import { PROTOCOL_MINOR } from '../proto/limits.js';
import type { HiveState, WirePacket } from '../proto/messages.js';
import type { NetworkModel } from '../scenario/model.js';
import { randomOutages, sampleLatencyMs, type UplinkProfile } from './uplink-profile.js';

/**
 * A hive's uplink behaviour in sim time, pure (docs/protocol.md §Hive): packets from the mesh
 * are cut into sequenced batches every interval; batches stay in a store-and-forward buffer
 * (bounded in bytes) until the cloud acknowledges them; unacknowledged batches are sent
 * again after the ack timeout. While the uplink is down nothing is sent, except at the first
 * interval of an outage, which the hive has not detected yet: what it sends then is lost on
 * the way and retransmitted after the outage.
 */
export interface Transmission {
  readonly hiveSerial: string;
  readonly seq: number;
  readonly sentAtMs: number;
  /** Packets the batch carries (0: a tombstone). */
  readonly packets: number;
  /** The HiveUplink batch as the uplink carries it (`decodeUplink` gives it back as an object). */
  readonly payload: Uint8Array;
  readonly bytes: number;
  readonly retransmission: boolean;
  /** Lost before reaching the broker (sent into an undetected outage). */
  readonly lost: boolean;
}

export interface HiveCounters {
  packetsIn: number;
  batches: number;
  transmissions: number;
  retransmissions: number;
  lostInFlight: number;
  /** Packets dropped because the store-and-forward buffer was full (reported loss). */
  overflowPackets: number;
  ackedBatches: number;
  ackedPackets: number;
}

/**
 * A batch in the store-and-forward buffer, as bytes: its packets stay encoded (no object per
 * packet from arrival to ack — a fleet's hives hold one to two intervals of them, ~1 M at
 * 100,000 sensors, which as objects outlived the young generation), with their sensing
 * instants for the latencies at ack time.
 */
interface Buffered {
  readonly seq: number;
  sentAtMs: number;
  /** The HiveUplink encoding (its `sentAtMs` included): re-encoded only when a send changes it. */
  payload: Uint8Array;
  /** The encoded packets within `payload`. */
  packets: Uint8Array;
  sensedAtMs: Float64Array;
  bytes: number;
  sends: number;
  /** A send of it reached the broker (one sent into an undetected outage did not). */
  reached: boolean;
  lastSentAtMs: number;
  lastArrivalMs: number;
}

export interface HiveNodeOptions {
  hiveId: string;
  serial: string;
  params: NetworkModel['hive'];
  profile: UplinkProfile;
  faults: FaultTimeline;
  seed: number;
  startMs: number;
  endMs: number;
  batchIntervalMs: number;
  /** When the hive starts, if later than the run (a ramp, scenario/ramp.ts): its first boot, so its uptime counts from then. */
  onlineAtMs?: number;
}

const EMPTY = new Uint8Array(0);
const NO_PACKETS = new Float64Array(0);
const TRAILER = uplinkTrailerSize(PROTOCOL_MINOR);

export class HiveNode {
  readonly counters: HiveCounters = {
    packetsIn: 0,
    batches: 0,
    transmissions: 0,
    retransmissions: 0,
    lostInFlight: 0,
    overflowPackets: 0,
    ackedBatches: 0,
    ackedPackets: 0,
  };
  /** Sim-time latency, sensing → arrival at the broker, of every acknowledged packet. */
  /** Sensing → acked latency of every acked packet, as value counts (bounded memory, exact percentiles). */
  readonly latenciesMs = new ValueCounts();
  readonly #o: HiveNodeOptions;
  readonly #latencyRng: Rng;
  readonly #randomOutages: Window[];
  /** Packets received since the last cut, encoded as they came. */
  readonly #queue = new UplinkPackets();
  #buffer: Buffered[] = [];
  #bufferedBytes = 0;
  #seq = 1;
  #ackedSeq = 0;
  /** Start of the outage already detected (nothing is sent until it ends). */
  #detectedOutage: number | null = null;
  #lastHeartbeatMs = -Infinity;
  #bootMs: number;
  #booted = true;

  constructor(o: HiveNodeOptions) {
    this.#o = o;
    this.#latencyRng = rngFor(o.seed, `uplink:${o.hiveId}`);
    this.#randomOutages = randomOutages(o.profile, rngFor(o.seed, `uplink-outages:${o.hiveId}`), o.startMs, o.endMs);
    this.#bootMs = o.onlineAtMs ?? o.startMs;
  }

  get ackedSeq(): number {
    return this.#ackedSeq;
  }
  get nextSeq(): number {
    return this.#seq;
  }
  get buffered(): { batches: number; bytes: number } {
    return { batches: this.#buffer.length, bytes: this.#bufferedBytes };
  }

  receive(packets: readonly WirePacket[]): void {
    for (const p of packets) this.#queue.push(p);
  }

  /**
   * Where packets arriving from the mesh are written, encoded (`UplinkPackets.presence`/
   * `traffic`, or `push`), in arrival order: the next `plan` cuts them into batches.
   */
  get incoming(): UplinkPackets {
    return this.#queue;
  }

  uplinkDown(t: number): Window | null {
    return (
      this.#o.faults.uplinkDownWindow(this.#o.hiveId, t) ??
      this.#randomOutages.find((w) => t >= w.from && t < w.to) ??
      null
    );
  }

  /** Cuts this interval's batch and returns what goes on the uplink at `t`, in sequence order. */
  plan(t: number): Transmission[] {
    this.#cut(t);
    for (const end of this.#o.faults.rebootsEnded(this.#o.hiveId, t - this.#o.batchIntervalMs, t)) this.#reboot(end);
    const down = this.uplinkDown(t);
    if (
      restartInOutageDropsBatch &&
      down !== null &&
      this.#o.faults.brokerRestartsIn(t - this.#o.batchIntervalMs, t).length > 0
    )
      this.#forgetOldest();
    if (down !== null && this.#detectedOutage === down.from) return [];
    const budget = Math.max(1, Math.floor((this.#o.profile.bandwidthBytesPerS * this.#o.batchIntervalMs) / 1000));
    const out: Transmission[] = [];
    let used = 0;
    for (const b of this.#buffer) {
      const due = b.sends === 0 || t - b.lastSentAtMs >= this.#o.params.ackTimeoutMs;
      if (!due) continue;
      if (out.length > 0 && used + b.bytes > budget) break;
      used += b.bytes;
      out.push(this.#send(b, t, down !== null));
    }
    if (down !== null) this.#detectedOutage = down.from;
    return this.#o.faults.duplicatingAt(this.#o.hiveId, t) ? this.#twice(out) : out;
  }

  /** The cloud acknowledged every batch up to `ackedSeq` (cumulative). */
  acked(ackedSeq: number): void {
    // A resumed run's hive starts again at seq 1 while the cloud's store already holds more:
    // batches cut since at or below the acked progress are stored, so they leave the buffer too,
    // once a send of them reached the cloud: the cloud then counts each as a duplicate, stored
    // before (the run's ledger balances). One the bandwidth budget held back is not dropped
    // unsent, nor one whose only send was lost in an outage the hive had not noticed yet (found by
    // explore: hive_reboot@13s+9s:hive=Hive 1; platform_restart@64s). In a run that did not
    // resume, an acked batch always reached the cloud.
    if (ackedSeq > this.#ackedSeq) this.#ackedSeq = ackedSeq;
    ackedSeq = this.#ackedSeq;
    while (this.#buffer.length > 0 && this.#buffer[0]!.seq <= ackedSeq && this.#buffer[0]!.reached) {
      const b = this.#buffer.shift()!;
      this.#bufferedBytes -= b.bytes;
      this.counters.ackedBatches++;
      this.counters.ackedPackets += b.sensedAtMs.length;
      for (const sensedAtMs of b.sensedAtMs) this.latenciesMs.add(b.lastArrivalMs - sensedAtMs);
    }
  }

  /** The hive's own clock at true time t, which stamps its batches and heartbeats: off by a clock_skew fault's offset while it lasts. */
  clockAt(t: number): number {
    return t + this.#o.faults.clockOffsetAt(this.#o.hiveId, t);
  }

  heartbeatDue(t: number): boolean {
    return this.uplinkDown(t) === null && t - this.#lastHeartbeatMs >= this.#o.params.heartbeatIntervalMs;
  }

  /** State for a heartbeat sent at `t` (marks it sent). */
  heartbeatState(t: number, sent: readonly Transmission[]): { state: HiveState; uptimeMs: number } {
    this.#lastHeartbeatMs = t;
    const state: HiveState = this.#booted
      ? 'booting'
      : sent.some((s) => s.retransmission)
        ? 'catching_up'
        : this.#buffer.length > 0
          ? 'streaming'
          : 'online';
    this.#booted = false;
    return { state, uptimeMs: t - this.#bootMs };
  }

  /**
   * The duplicate_batch fault: each batch delivered twice, the copy right after it (as a broker
   * or network redelivery would). Counted as a retransmission, so the ledger says where the
   * cloud's duplicates came from.
   */
  #twice(out: Transmission[]): Transmission[] {
    return out.flatMap((tx) => {
      if (tx.lost) return [tx];
      this.counters.transmissions++;
      this.counters.retransmissions++;
      return [tx, { ...tx, retransmission: true }];
    });
  }

  /** The planted defect (planted-defect.ts, test-only): the oldest buffered batch leaves uncounted. */
  #forgetOldest(): void {
    const b = this.#buffer.shift();
    if (b) this.#bufferedBytes -= b.bytes;
  }

  #reboot(atMs: number): void {
    this.#bootMs = atMs;
    this.#booted = true;
  }

  #cut(t: number): void {
    const q = this.#queue;
    this.counters.packetsIn += q.count;
    for (let from = 0; from < q.count;) {
      const to = Math.min(q.count, from + this.#o.params.maxBatchPackets);
      const b: Buffered = {
        seq: this.#seq++,
        sentAtMs: t,
        payload: EMPTY,
        packets: EMPTY,
        sensedAtMs: q.sensedAtMs(from, to),
        bytes: 0,
        sends: 0,
        reached: false,
        lastSentAtMs: -Infinity,
        lastArrivalMs: t,
      };
      this.#encode(b, q.bytes(from, to));
      this.#buffer.push(b);
      this.#bufferedBytes += b.bytes;
      this.counters.batches++;
      from = to;
    }
    q.clear();
    this.#enforceLimit();
  }

  /** `b`'s payload from its header and `packets` (a view that may be into the old payload). */
  #encode(b: Buffered, packets: Uint8Array): void {
    const payload = encodeUplinkFrom(this.#o.serial, b.seq, b.sentAtMs, packets, PROTOCOL_MINOR);
    const end = payload.length - TRAILER;
    b.payload = payload;
    b.packets = payload.subarray(end - packets.length, end);
    b.bytes = payload.length;
  }

  /**
   * Overflow drops the packets of the oldest batch still holding packets but keeps its
   * sequence number as an empty batch (a tombstone), so the cloud's contiguous ack can move on.
   */
  #enforceLimit(): void {
    for (const b of this.#buffer) {
      if (this.#bufferedBytes <= this.#o.params.bufferBytes) return;
      if (b.sensedAtMs.length === 0) continue;
      this.counters.overflowPackets += b.sensedAtMs.length;
      const before = b.bytes;
      b.sensedAtMs = NO_PACKETS;
      this.#encode(b, EMPTY);
      this.#bufferedBytes += b.bytes - before;
    }
  }

  #send(b: Buffered, t: number, lost: boolean): Transmission {
    b.sends++;
    if (!lost) b.reached = true;
    b.lastSentAtMs = t;
    b.lastArrivalMs = t + sampleLatencyMs(this.#o.profile, this.#latencyRng);
    const stamp = this.clockAt(t);
    if (b.sentAtMs !== stamp) {
      // A retransmission (or a first send held back by the budget or an outage, or a skewed clock) carries its own send instant.
      b.sentAtMs = stamp;
      this.#encode(b, b.packets);
    }
    const retransmission = b.sends > 1;
    this.counters.transmissions++;
    if (retransmission) this.counters.retransmissions++;
    if (lost) this.counters.lostInFlight++;
    return {
      hiveSerial: this.#o.serial,
      seq: b.seq,
      sentAtMs: b.sentAtMs,
      packets: b.sensedAtMs.length,
      payload: b.payload,
      bytes: b.bytes,
      retransmission,
      lost,
    };
  }
}
