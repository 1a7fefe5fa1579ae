import type { Clock } from '../core/clock.js';
import { floorToMinute, MINUTE_MS } from '../core/time.js';
import type { UplinkAck } from '../proto/messages.js';
import { inspectUplink, type AcceptedPacket } from './ingest.js';
import { PresenceAggregator, type PresenceMinuteRow } from './presence.js';
import type { AssetRegistry } from './registry.js';
import type { StoredPresencePacket, StoredTrafficPacket, Store } from './store/port.js';
import { TrafficAggregator, type TrafficMinuteRow } from './traffic.js';

/**
 * The cloud's processing, without sockets: message in → validated, deduplicated, stored in
 * one transaction, aggregated → the ack to publish (or null). The MQTT adapter feeds it and
 * publishes what it returns; tests call it directly.
 */
export interface CloudCounters {
  batchesReceived: number;
  batchesProcessed: number;
  duplicateBatches: number;
  packetsProcessed: number;
  deadLettered: number;
}

export interface PipelineOptions {
  registry: AssetRegistry;
  store: Store;
  clock: Clock;
  /** A minute is finalised once its end is at least this far behind the time passed to advance(). */
  lookbackMs: number;
}

const byKeyThenMinute = <T extends { minuteMs: number }>(key: (r: T) => string) => (a: T, b: T): number => {
  const ka = key(a);
  const kb = key(b);
  return ka < kb ? -1 : ka > kb ? 1 : a.minuteMs - b.minuteMs;
};

export class CloudPipeline {
  readonly #o: PipelineOptions;
  readonly #presence: PresenceAggregator;
  readonly #traffic = new TrafficAggregator();
  readonly #latencies: number[] = [];
  readonly #counters: CloudCounters = { batchesReceived: 0, batchesProcessed: 0, duplicateBatches: 0, packetsProcessed: 0, deadLettered: 0 };
  /** Every minute starting before this has been finalised once; data for it reopens it from the store. */
  #finalisedBefore = -Infinity;

  constructor(opts: PipelineOptions) {
    this.#o = opts;
    this.#presence = new PresenceAggregator(opts.registry);
  }

  /** Handles one message from an uplink subscription; returns the ack to publish, if any. */
  handleMessage(topic: string, payload: Uint8Array): UplinkAck | null {
    const { registry, store, clock } = this.#o;
    this.#counters.batchesReceived++;
    const receivedAtMs = clock.now();
    const v = inspectUplink(registry, { topic, payload, receivedAtMs });
    if (v.kind === 'rejected') {
      store.writeDeadLetter(v.deadLetter);
      this.#counters.deadLettered++;
      return null;
    }
    const serial = v.hive.serial;
    if (store.hasBatch(serial, v.batch.seq)) {
      // A retransmission (lost ack, or QoS 1 redelivery): already stored, so only re-ack.
      this.#counters.duplicateBatches++;
      return { hiveSerial: serial, ackedSeq: store.ackedSeq(serial), ackedAtMs: clock.now() };
    }
    const ackedSeq = this.#nextAckedSeq(serial, v.batch.seq);
    store.writeBatch({
      hiveSerial: serial,
      seq: v.batch.seq,
      sentAtMs: v.batch.sentAtMs,
      receivedAtMs,
      ackedSeq,
      ...splitByKind(v.packets),
      deadLetters: v.deadLetters,
    });
    this.#counters.batchesProcessed++;
    this.#counters.deadLettered += v.deadLetters.length;
    this.#aggregate(v.packets, receivedAtMs);
    return { hiveSerial: serial, ackedSeq, ackedAtMs: clock.now() };
  }

  /** Finalises every open minute whose end is at least lookbackMs before nowMs. */
  advance(nowMs: number): void {
    const horizon = nowMs - this.#o.lookbackMs;
    this.#finalise((minuteMs) => minuteMs + MINUTE_MS <= horizon);
    this.#finalisedBefore = Math.max(this.#finalisedBefore, floorToMinute(horizon));
  }

  /** Finalises every open minute (end of run); later data reopens its minute from the store. */
  finish(): void {
    this.#finalise(() => true);
    this.#finalisedBefore = Infinity;
  }

  counters(): CloudCounters {
    return { ...this.#counters };
  }

  latenciesMs(): readonly number[] {
    return this.#latencies;
  }

  /** Ack progress including `seq`: it extends the contiguous run only when it fills the next gap. */
  #nextAckedSeq(serial: string, seq: number): number {
    let acked = this.#o.store.ackedSeq(serial);
    if (seq !== acked + 1) return acked;
    acked = seq;
    while (this.#o.store.hasBatch(serial, acked + 1)) acked++;
    return acked;
  }

  #aggregate(packets: readonly AcceptedPacket[], processedAtMs: number): void {
    for (const { sensorId, packet: p } of packets) {
      const minuteMs = floorToMinute(p.sensedAtMs);
      if (p.kind === 'presence') {
        if (minuteMs < this.#finalisedBefore && !this.#presence.hasMinute(minuteMs)) this.#reopenPresence(minuteMs);
        this.#presence.add(sensorId, p.sensedAtMs, p.detections);
      } else {
        if (minuteMs < this.#finalisedBefore && !this.#traffic.hasMinute(minuteMs)) this.#reopenTraffic(minuteMs);
        this.#traffic.add(sensorId, p.sensedAtMs, p);
      }
      this.#latencies.push(processedAtMs - p.sensedAtMs);
      this.#counters.packetsProcessed++;
    }
  }

  // Late data for a finalised minute: reload everything stored for it (the new packet
  // included, it was written first) so the recomputed minute is complete, not just the news.
  #reopenPresence(minuteMs: number): void {
    for (const p of this.#o.store.presencePacketsInMinute(minuteMs)) this.#presence.add(p.sensorId, p.sensedAtMs, p.detections);
  }

  #reopenTraffic(minuteMs: number): void {
    for (const t of this.#o.store.trafficPacketsInMinute(minuteMs)) this.#traffic.add(t.sensorId, t.sensedAtMs, t);
  }

  #finalise(due: (minuteMs: number) => boolean): void {
    const presence: PresenceMinuteRow[] = this.#presence.openMinutes().filter(due).flatMap((m) => this.#presence.finalise(m));
    const traffic: TrafficMinuteRow[] = this.#traffic.openMinutes().filter(due).flatMap((m) => this.#traffic.finalise(m));
    if (presence.length > 0) this.#o.store.writePresenceMinutes(presence.sort(byKeyThenMinute((r) => r.spaceId)));
    if (traffic.length > 0) this.#o.store.writeTrafficMinutes(traffic.sort(byKeyThenMinute((r) => r.sensorId)));
  }
}

function splitByKind(packets: readonly AcceptedPacket[]): { presence: StoredPresencePacket[]; traffic: StoredTrafficPacket[] } {
  const presence: StoredPresencePacket[] = [];
  const traffic: StoredTrafficPacket[] = [];
  for (const { sensorId, packet: p } of packets) {
    if (p.kind === 'presence') presence.push({ sensorId, sensedAtMs: p.sensedAtMs, detections: p.detections });
    else traffic.push({ sensorId, sensedAtMs: p.sensedAtMs, intervalMs: p.intervalMs, in: p.in, out: p.out });
  }
  return { presence, traffic };
}
