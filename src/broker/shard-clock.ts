import { connectAsync, type MqttClient } from 'mqtt';
import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * The shards' clock channel (docs/scale-out.md, Time): simulator shards whose uplinks are
 * ingested by `occusim serve` processes elsewhere tell them how far simulated time has got.
 *
 * A shard publishes `{ index, count, t }` on `occusim/v1/control/shards/<index>/clock` (QoS 1)
 * once every batch it sensed up to `t` is acknowledged — stored in the shared store, since a
 * batch is acked only once stored — and `{ …, done: true }` when its run has ended. An ingest
 * process moves its clock to the minimum `t` over the declared shards (every shard's data up to
 * there is stored, whichever process stored it) and finishes once every shard said done. At
 * `--speed max` the shards wait for their acks before time moves on, so this is deterministic.
 */
export const SHARD_CLOCK_FILTER = 'occusim/v1/control/shards/+/clock';
export const shardClockTopic = (index: number): string => `occusim/v1/control/shards/${index}/clock`;

export interface ShardClockMessage {
  /** 1-based shard index, of `count`. */
  index: number;
  count: number;
  /** Simulated ms: every batch sensed up to here is stored. */
  t: number;
  done: boolean;
}

export function encodeShardClock(m: ShardClockMessage): Buffer {
  return Buffer.from(JSON.stringify(m));
}

/** The message, or why it is not one (the topic names the place). */
export function decodeShardClock(topic: string, payload: Uint8Array): ShardClockMessage | string {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    return `${topic}: not JSON`;
  }
  const m = v as Partial<ShardClockMessage>;
  const int = (x: unknown): x is number => Number.isSafeInteger(x);
  if (!int(m.index) || !int(m.count) || !int(m.t) || typeof m.done !== 'boolean' || m.index < 1 || m.index > m.count)
    return `${topic}: want { index, count, t, done } with 1 ≤ index ≤ count`;
  if (topic !== shardClockTopic(m.index)) return `${topic}: shard ${m.index} on another shard's topic`;
  return { index: m.index, count: m.count, t: m.t, done: m.done };
}

/** Where the declared shards have got: the minimum of their clocks once each has spoken. Pure. */
export class ShardClocks {
  readonly #count: number;
  readonly #t = new Map<number, number>();
  readonly #done = new Set<number>();

  constructor(count: number) {
    this.#count = count;
  }

  /** Records one message; a shard's clock never moves back. Throws (USAGE) on a shard count other than declared. */
  note(m: ShardClockMessage): void {
    if (m.count !== this.#count)
      throw new AppError(
        ErrorCodes.USAGE,
        `shard ${m.index}/${m.count} reports to ingest processes declared for ${this.#count} shards (--shards)`,
      );
    this.#t.set(m.index, Math.max(m.t, this.#t.get(m.index) ?? m.t));
    if (m.done) this.#done.add(m.index);
  }

  /** The time every shard has reached; null until each has published once. */
  min(): number | null {
    if (this.#t.size < this.#count) return null;
    return Math.min(...this.#t.values());
  }

  allDone(): boolean {
    return this.#done.size === this.#count;
  }
}

async function connect(url: string, clientId: string): Promise<MqttClient> {
  try {
    return await connectAsync(url, { clientId, clean: true, reconnectPeriod: 1000 }, false);
  } catch (err) {
    throw new AppError(ErrorCodes.CLOUD_FAILED, `shard clock cannot connect to ${url}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

export interface ShardClockPublisher {
  /** Resolves once the broker has the message (PUBACK). */
  publish(t: number, done: boolean): Promise<void>;
  close(): Promise<void>;
}

/** A shard's side of the channel. */
export async function startShardClockPublisher(
  url: string,
  shard: { index: number; count: number },
  clientId: string,
): Promise<ShardClockPublisher> {
  const client = await connect(url, clientId);
  return {
    async publish(t, done) {
      await client.publishAsync(shardClockTopic(shard.index), encodeShardClock({ ...shard, t, done }), { qos: 1 });
    },
    close: () => client.endAsync(),
  };
}

/**
 * An ingest process's side: calls `onMessage` for every shard clock message, in arrival order
 * (messages of one shard arrive in the order it published them); refused messages go to `onRefused`.
 */
export async function followShardClocks(
  url: string,
  clientId: string,
  onMessage: (m: ShardClockMessage) => void,
  onRefused: (why: string) => void,
): Promise<{ close(): Promise<void> }> {
  const client = await connect(url, clientId);
  client.on('message', (topic, payload) => {
    const m = decodeShardClock(topic, payload);
    if (typeof m === 'string') onRefused(m);
    else onMessage(m);
  });
  await client.subscribeAsync(SHARD_CLOCK_FILTER, { qos: 1 });
  return { close: () => client.endAsync() };
}
