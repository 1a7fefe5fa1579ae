import type { HiveHeartbeat, UplinkBatch } from '../proto/messages.js';
import { connectHive, type HiveLink, type HiveLinkStats, type UplinkHeader } from './mqtt-hive.js';

/**
 * The link of a hive a ramp brings online later (scenario/ramp.ts): not connected at the start,
 * it logs in when its hive group calls `connect()` at the hive's first delivery after coming
 * online — every hive of a ramp step at once, so the broker takes them as a reconnect storm, the
 * real MQTT CONNECT/SUBSCRIBE of each. Until then it has sent nothing and counts nothing.
 */
export class DeferredHiveLink implements HiveLink {
  #link: Promise<HiveLink> | undefined;
  #connected: HiveLink | undefined;
  #closed = false;

  constructor(private readonly login: () => Promise<HiveLink>) {}

  /** Logs in (once); later calls wait for the same login. */
  async connect(): Promise<void> {
    this.#link ??= this.login().then((l) => (this.#connected = l));
    await this.#link;
  }

  get connected(): boolean {
    return this.#connected !== undefined;
  }

  async publish(batch: UplinkBatch): Promise<void> {
    return (await this.#ready()).publish(batch);
  }

  transmit(batch: UplinkBatch): Promise<number>;
  transmit(batch: UplinkHeader, payload: Uint8Array): Promise<number>;
  async transmit(batch: UplinkHeader | UplinkBatch, payload?: Uint8Array): Promise<number> {
    const link = await this.#ready();
    return payload === undefined ? link.transmit(batch as UplinkBatch) : link.transmit(batch, payload);
  }

  async heartbeat(hb: HiveHeartbeat): Promise<void> {
    return (await this.#ready()).heartbeat(hb);
  }

  stats(): HiveLinkStats {
    return this.#connected?.stats() ?? { published: 0, acked: 0, bytesSent: 0 };
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#link) await (await this.#link).close();
  }

  async #ready(): Promise<HiveLink> {
    if (this.#closed) throw new Error('hive link closed');
    await this.connect();
    return this.#connected as HiveLink;
  }
}

/**
 * A hive's link to the broker: logged in now, or, for a hive a ramp brings online after the
 * start, a `DeferredHiveLink` that logs in then (hive-group.ts).
 */
export function hiveLink(
  hive: { readonly serial: string; readonly password: string },
  broker: { readonly brokerUrl: string; readonly ackTimeoutMs: number },
  loginNow: boolean,
): Promise<HiveLink> {
  const login = (): Promise<HiveLink> =>
    connectHive({
      brokerUrl: broker.brokerUrl,
      serial: hive.serial,
      password: hive.password,
      ackTimeoutMs: broker.ackTimeoutMs,
    });
  return loginNow ? login() : Promise.resolve(new DeferredHiveLink(login));
}

/** Closes every link, each once even when another fails; the first failure is the one reported. */
export async function closeLinks(links: Iterable<HiveLink>): Promise<void> {
  let failed: { err: unknown } | null = null;
  for (const link of links) {
    try {
      await link.close();
    } catch (err) {
      failed ??= { err };
    }
  }
  if (failed) throw failed.err;
}
