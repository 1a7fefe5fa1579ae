import type { Clock } from '../core/clock.js';
import { floorToMinute } from '../core/time.js';
import type { UplinkAck } from '../proto/messages.js';
import { inspectUplink, type AcceptedPacket } from './ingest.js';
import { PresenceAggregator } from './presence.js';
import { Recompute, type RecomputeCounters } from './recompute.js';
import type { AssetRegistry } from './registry.js';
import type { OccupancyEvent, StoredPresencePacket, StoredTrafficPacket, Store } from './store/port.js';
import { TrafficAggregator } from './traffic.js';

/**
 * The cloud's processing, without sockets: message in → validated, deduplicated, stored in
 * one transaction, aggregated → the ack to publish (or null). The MQTT adapter feeds it and
 * publishes what it returns; tests call it directly.
 */
export interface CloudCounters extends RecomputeCounters {
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
  /** IANA zone of the site holding a space (rollup buckets); default UTC. */
  zoneOf?: (spaceId: string) => string;
  /** Listener of the internal occupancy event stream (the outbox table holds them too). */
  onEvent?: (e: OccupancyEvent) => void;
}

export class CloudPipeline {
  readonly #o: PipelineOptions;
  readonly #presence: PresenceAggregator;
  readonly #traffic = new TrafficAggregator();
  readonly #latencies: number[] = [];
  readonly #counters = { batchesReceived: 0, batchesProcessed: 0, duplicateBatches: 0, packetsProcessed: 0, deadLettered: 0 };
  readonly #recompute: Recompute;

  /** Resumes from the store: raw packets of minutes not yet finalised are reloaded (crash recovery). */
  constructor(opts: PipelineOptions) {
    this.#o = opts;
    this.#presence = new PresenceAggregator(opts.registry);
    this.#recompute = new Recompute({
      store: opts.store,
      presence: this.#presence,
      traffic: this.#traffic,
      lookbackMs: opts.lookbackMs,
      zoneOf: opts.zoneOf ?? (() => 'UTC'),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    });
    this.#recover();
  }

  #recover(): void {
    const from = this.#recompute.recoverFrom();
    for (const p of this.#o.store.presencePacketsSince(from)) this.#presence.add(p.sensorId, p.sensedAtMs, p.detections);
    for (const t of this.#o.store.trafficPacketsSince(from)) this.#traffic.add(t.sensorId, t.sensedAtMs, t);
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

  /** At each new minute, recomputes the look-back window (events); finalises minutes leaving it. */
  advance(nowMs: number): void {
    this.#recompute.advance(nowMs);
  }

  /** Finalises every open minute (end of run); later data reopens its minute from the store. */
  finish(): void {
    this.#recompute.finish(this.#o.clock.now());
  }

  counters(): CloudCounters {
    return { ...this.#counters, ...this.#recompute.counters };
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
        if (this.#recompute.noteArrival(minuteMs, this.#presence.hasMinute(minuteMs))) this.#reopenPresence(minuteMs);
        this.#presence.add(sensorId, p.sensedAtMs, p.detections);
      } else {
        if (this.#recompute.noteArrival(minuteMs, this.#traffic.hasMinute(minuteMs))) this.#reopenTraffic(minuteMs);
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
