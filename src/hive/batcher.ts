import { AppError, ErrorCodes } from '../core/errors.js';
import { isValidSerial } from '../core/topics.js';
import type { UplinkBatch, WirePacket } from '../proto/messages.js';

/** Default cap on packets per uplink batch, keeping one MQTT payload well under the broker limit. */
export const DEFAULT_MAX_PACKETS_PER_BATCH = 500;

export interface BatcherOptions {
  hiveSerial: string;
  /** Upper bound on packets in one batch; default 500. */
  maxPacketsPerBatch?: number;
}

/**
 * Collects a hive's wire packets between uplink instants and cuts them into sequenced
 * batches. Pure: no clock and no I/O; the caller supplies `nowMs` (sim time).
 */
export class HiveBatcher {
  private readonly hiveSerial: string;
  private readonly maxPackets: number;
  private queue: WirePacket[] = [];
  private seq = 1;

  constructor(opts: BatcherOptions) {
    this.hiveSerial = checkSerial(opts.hiveSerial);
    this.maxPackets = checkMaxPackets(opts.maxPacketsPerBatch ?? DEFAULT_MAX_PACKETS_PER_BATCH);
  }

  /** Sequence number the next batch will carry (1 before any batch is taken). */
  get nextSeq(): number {
    return this.seq;
  }

  /** Number of packets waiting for the next `takeBatches`. */
  get queued(): number {
    return this.queue.length;
  }

  enqueue(packet: WirePacket): void {
    this.queue.push(packet);
  }

  /**
   * Packets enqueued since the last take, split into batches of at most maxPacketsPerBatch,
   * each with the next sequence number (starting at 1) and sentAtMs = nowMs. Empty array
   * when nothing is queued (no empty batches in this version).
   */
  takeBatches(nowMs: number): UplinkBatch[] {
    const pending = this.queue;
    this.queue = [];
    const batches: UplinkBatch[] = [];
    for (let start = 0; start < pending.length; start += this.maxPackets) {
      const packets = pending.slice(start, start + this.maxPackets);
      batches.push({ hiveSerial: this.hiveSerial, seq: this.seq++, sentAtMs: nowMs, packets });
    }
    return batches;
  }
}

function checkSerial(serial: string): string {
  if (!isValidSerial(serial)) {
    throw new AppError(ErrorCodes.USAGE, `HiveBatcher: invalid hive serial ${JSON.stringify(serial)}`);
  }
  return serial;
}

function checkMaxPackets(n: number): number {
  if (!Number.isInteger(n) || n < 1) {
    throw new AppError(ErrorCodes.USAGE, `HiveBatcher: maxPacketsPerBatch must be a positive integer, got ${n}`);
  }
  return n;
}
