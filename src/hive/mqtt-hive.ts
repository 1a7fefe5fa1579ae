import type { Socket } from 'node:net';
import { connectAsync } from 'mqtt';
import type { IClientOptions, MqttClient } from 'mqtt';
import { AppError, ErrorCodes } from '../core/errors.js';
import { ackTopic, heartbeatTopic, uplinkTopic } from '../core/topics.js';
import { decodeAck, encodeHeartbeat, encodeUplink } from '../proto/codec.js';
import type { HiveHeartbeat, UplinkBatch } from '../proto/messages.js';
import { AckWaiters } from './ack-waiters.js';

export interface HiveLinkOptions {
  brokerUrl: string;
  serial: string;
  password: string;
  /** Wall-clock ms to wait for the cloud's ack of one batch; default 10000. */
  ackTimeoutMs?: number;
}

export interface HiveLinkStats {
  /** Batches the broker acknowledged (PUBACK). */
  published: number;
  /** Batches the cloud acknowledged end to end. */
  acked: number;
  /** Uplink payload bytes the broker acknowledged. */
  bytesSent: number;
}

export interface HiveLink {
  /**
   * Publishes (QoS 1) and resolves once the cloud has acknowledged seq (an UplinkAck with
   * ackedSeq >= batch.seq on the hive's ack topic). Rejects with AppError TIMEOUT after
   * ackTimeoutMs.
   */
  publish(batch: UplinkBatch): Promise<void>;
  /**
   * Publishes (QoS 1) and resolves with the acked_seq of the next ack the cloud sends (the
   * cloud answers every valid uplink with exactly one ack, in order), so the caller knows
   * the cloud's progress after this batch. Rejects with TIMEOUT after ackTimeoutMs.
   */
  transmit(batch: UplinkBatch): Promise<number>;
  /** The same for a batch already encoded (`payload`), named by its hive and sequence number. */
  transmit(batch: UplinkHeader, payload: Uint8Array): Promise<number>;
  /** Publishes a heartbeat (QoS 1) and resolves on the broker's PUBACK. */
  heartbeat(hb: HiveHeartbeat): Promise<void>;
  stats(): HiveLinkStats;
  close(): Promise<void>;
  /** Logs in now if the link was left unconnected until its hive comes online (deferred-link.ts); absent: connected already. */
  connect?(): Promise<void>;
}

/** What the link needs of a batch it is given encoded. */
export type UplinkHeader = Pick<UplinkBatch, 'hiveSerial' | 'seq'>;

export const DEFAULT_ACK_TIMEOUT_MS = 10_000;
/** Wall time allowed per packet of a delivery interval on top of the default (~10× what ingest costs per packet). */
const ACK_WALL_MS_PER_PACKET = 0.1;

/**
 * Ack timeout for a hive of a fleet that sends `packetsPerInterval` packets (all hives) per
 * delivery: every hive publishes at once and the platform ingests them one after another, so
 * the last ack of a 90,000-sensor interval (900,000 packets) comes long after 10 s on a busy
 * 2-core machine. A dead broker is still detected; a large fleet is no longer taken for one.
 */
export function ackTimeoutForFleet(packetsPerInterval: number): number {
  return Math.round(DEFAULT_ACK_TIMEOUT_MS + packetsPerInterval * ACK_WALL_MS_PER_PACKET);
}
/** Wall ms between reconnect attempts after a drop (e.g. a broker restart fault). */
const RECONNECT_PERIOD_MS = 250;
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Connects a hive to the broker (username = serial, clientId = `hive-<serial>`, clean
 * session) and subscribes to its ack topic before resolving. Refused logins and unreachable
 * brokers reject with AppError BROKER_FAILED.
 */
export async function connectHive(opts: HiveLinkOptions): Promise<HiveLink> {
  const client = await openClient(opts);
  try {
    await subscribeAcks(client, opts.serial);
  } catch (err) {
    await client.endAsync(true);
    throw err;
  }
  return new MqttHiveLink(client, opts);
}

async function openClient(opts: HiveLinkOptions): Promise<MqttClient> {
  const options: IClientOptions = {
    username: opts.serial,
    password: opts.password,
    clientId: `hive-${opts.serial}`,
    clean: true,
    reconnectPeriod: RECONNECT_PERIOD_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
  };
  try {
    // allowRetries=false: a refused first connection is an error, not a retry loop.
    const client = await connectAsync(opts.brokerUrl, options, false);
    // mqtt.js retries on its own after a drop; without a listener an 'error' would throw.
    client.on('error', () => undefined);
    disableNagle(client);
    client.on('connect', () => disableNagle(client));
    return client;
  } catch (err) {
    throw new AppError(
      ErrorCodes.BROKER_FAILED,
      `hive ${opts.serial}: cannot connect to ${opts.brokerUrl}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** Each batch is a small write awaiting a reply; Nagle would hold it back behind the last ACK. */
function disableNagle(client: MqttClient): void {
  const socket = client.stream as Partial<Socket>;
  socket.setNoDelay?.(true);
}

async function subscribeAcks(client: MqttClient, serial: string): Promise<void> {
  const topic = ackTopic(serial);
  try {
    // mqtt.js rejects when the SUBACK carries 0x80 (refused filter, MQTT 3.1.1 §3.9.3).
    await client.subscribeAsync(topic, { qos: 1 });
  } catch (err) {
    throw new AppError(
      ErrorCodes.BROKER_FAILED,
      `hive ${serial}: broker refused subscription to ${topic}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

class MqttHiveLink implements HiveLink {
  private readonly serial: string;
  private readonly uplink: string;
  private readonly ack: string;
  private readonly waiters: AckWaiters;
  private readonly nextAck: Array<{ resolve: (seq: number) => void; timer: NodeJS.Timeout }> = [];
  private readonly ackTimeoutMs: number;
  private readonly counts: HiveLinkStats = { published: 0, acked: 0, bytesSent: 0 };
  private closing: Promise<void> | undefined;

  constructor(
    private readonly client: MqttClient,
    opts: HiveLinkOptions,
  ) {
    this.serial = opts.serial;
    this.uplink = uplinkTopic(opts.serial);
    this.ack = ackTopic(opts.serial);
    this.ackTimeoutMs = opts.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
    this.waiters = new AckWaiters(this.ackTimeoutMs, `hive ${opts.serial}`);
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
  }

  async publish(batch: UplinkBatch): Promise<void> {
    this.checkPublishable(batch);
    const payload = Buffer.from(encodeUplink(batch));
    const wait = this.waiters.wait(batch.seq);
    this.client.publishAsync(this.uplink, payload, { qos: 1 }).then(
      () => this.countPublished(payload.length),
      (err: unknown) => wait.cancel(this.brokerError(`publish of seq ${batch.seq} failed`, err)),
    );
    await wait.promise;
    this.counts.acked++;
  }

  transmit(batch: UplinkBatch): Promise<number>;
  transmit(batch: UplinkHeader, payload: Uint8Array): Promise<number>;
  async transmit(batch: UplinkHeader | UplinkBatch, encoded?: Uint8Array): Promise<number> {
    this.checkPublishable(batch);
    const bytes = encoded ?? encodeUplink(batch as UplinkBatch);
    // A view, not a copy: mqtt.js writes it to the socket as it is.
    const payload = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const acked = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.nextAck.findIndex((w) => w.timer === timer);
        if (i >= 0) this.nextAck.splice(i, 1);
        reject(
          new AppError(
            ErrorCodes.TIMEOUT,
            `hive ${this.serial}: no ack after batch seq ${batch.seq} within ${this.ackTimeoutMs} ms`,
          ),
        );
      }, this.ackTimeoutMs);
      this.nextAck.push({ resolve, timer });
    });
    try {
      await this.client.publishAsync(this.uplink, payload, { qos: 1 });
    } catch (err) {
      throw this.brokerError(`publish of seq ${batch.seq} failed`, err);
    }
    this.countPublished(payload.length);
    const seq = await acked;
    this.counts.acked++;
    return seq;
  }

  async heartbeat(hb: HiveHeartbeat): Promise<void> {
    try {
      await this.client.publishAsync(heartbeatTopic(this.serial), Buffer.from(encodeHeartbeat(hb)), { qos: 1 });
    } catch (err) {
      throw this.brokerError('heartbeat publish failed', err);
    }
  }

  stats(): HiveLinkStats {
    return { ...this.counts };
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.waiters.rejectAll(this.brokerError('link closed before the ack arrived'));
    for (const w of this.nextAck.splice(0)) clearTimeout(w.timer);
    await this.client.endAsync();
  }

  private checkPublishable(batch: UplinkHeader): void {
    if (batch.hiveSerial !== this.serial) {
      throw new AppError(ErrorCodes.USAGE, `hive ${this.serial}: cannot publish a batch of hive ${batch.hiveSerial}`);
    }
    if (this.closing !== undefined) throw this.brokerError('link is closed');
  }

  private countPublished(bytes: number): void {
    this.counts.published++;
    this.counts.bytesSent += bytes;
  }

  private onMessage(topic: string, payload: Buffer): void {
    if (topic !== this.ack) return;
    let ackedSeq: number;
    try {
      const ack = decodeAck(payload);
      if (ack.hiveSerial !== this.serial) return;
      ackedSeq = ack.ackedSeq;
    } catch {
      // A malformed ack cannot be attributed to a batch; the batch's own timeout reports it.
      return;
    }
    this.waiters.ack(ackedSeq);
    const next = this.nextAck.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve(ackedSeq);
    }
  }

  private brokerError(message: string, cause?: unknown): AppError {
    const text = `hive ${this.serial}: ${message}`;
    return cause === undefined
      ? new AppError(ErrorCodes.BROKER_FAILED, text)
      : new AppError(ErrorCodes.BROKER_FAILED, `${text}: ${(cause as Error).message}`, { cause });
  }
}
