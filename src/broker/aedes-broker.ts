import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Aedes } from 'aedes';
import { AppError, ErrorCodes } from '../core/errors.js';
import { buildCredentialTable } from './credentials.js';
import { policyHooks } from './hooks.js';
import {
  DEFAULT_MAX_CONNECT_BYTES,
  gatedConnection,
  PUBLISH_OVERHEAD_BYTES,
  type PacketGateLimits,
} from './packet-gate.js';
import { SharedSubscriptions } from './shared-subscriptions.js';

export interface BrokerCredentials {
  username: string;
  password: string;
}

export interface BrokerOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** TCP port; default 0 = pick a free port. */
  port?: number;
  hives: ReadonlyArray<{ serial: string; password: string }>;
  /** Service logins (the cloud ingest's own). */
  services: ReadonlyArray<BrokerCredentials & { role: 'cloud' }>;
  /** Largest accepted PUBLISH payload; default 256 KiB. Larger publishes close the connection. */
  maxPayloadBytes?: number;
  /** Called for every client PUBLISH the broker accepted, in the order it accepted them (capture recording). */
  onPublish?: (topic: string, payload: Buffer) => void;
}

/**
 * Counters since start. `connections`: successful CONNECTs (cumulative, not live);
 * `published`: client PUBLISHes that passed the ACL; `refusedAuth`: refused CONNECTs (bad
 * login or refused client id); `refusedAcl`: refused PUBLISHes (topic, $SYS or size) and
 * refused subscription filters.
 */
export interface BrokerStats {
  connections: number;
  published: number;
  refusedAuth: number;
  refusedAcl: number;
}

export interface EmbeddedBroker {
  /** `mqtt://HOST:PORT` */
  url: string;
  port: number;
  stats(): BrokerStats;
  /** Closes every client connection, the listener and the broker. Idempotent. */
  close(): Promise<void>;
  /**
   * Stops the broker (every connection dropped, in-memory state lost, as a crashed broker
   * process) and starts a fresh one on the same port (the broker-restart fault).
   */
  restart?(): Promise<void>;
  /** Resolves once every filter in `filters` has been subscribed since the last (re)start; rejects after timeoutMs. */
  waitForSubscriptions?(filters: readonly string[], timeoutMs: number): Promise<void>;
}

export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;

/** Starts an Aedes broker (MQTT 3.1.1 over TCP) with hive authentication and topic ACL. */
export async function startBroker(opts: BrokerOptions): Promise<EmbeddedBroker> {
  const counters: BrokerStats = { connections: 0, published: 0, refusedAuth: 0, refusedAcl: 0 };
  const host = opts.host ?? '127.0.0.1';
  let core = await startCore(opts, counters, host, opts.port ?? 0);
  const port = (core.server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `mqtt://${urlHost(host)}:${port}`,
    port,
    stats: () => ({ ...counters }),
    close: () => (closing ??= shutdown(core.server, core.aedes, core.sockets)),
    async restart() {
      if (closing !== undefined) throw new AppError(ErrorCodes.BROKER_FAILED, 'broker: closed, cannot restart');
      await shutdown(core.server, core.aedes, core.sockets);
      core = await startCore(opts, counters, host, port);
    },
    waitForSubscriptions: (filters, timeoutMs) => core.subscribed.waitFor(filters, timeoutMs),
  };
}

interface Core {
  aedes: Aedes;
  server: Server;
  sockets: Set<Socket>;
  subscribed: SubscriptionLog;
}

async function startCore(opts: BrokerOptions, counters: BrokerStats, host: string, port: number): Promise<Core> {
  const credentials = buildCredentialTable(opts.hives, opts.services);
  const maxPayloadBytes = opts.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const aedes = await Aedes.createBroker(policyHooks({ credentials, maxPayloadBytes, counters }));
  countTraffic(aedes, counters, opts.onPublish);
  new SharedSubscriptions().attach(aedes);
  const subscribed = new SubscriptionLog();
  aedes.on('subscribe', (subs) => subscribed.add(subs.map((x) => x.topic)));
  const sockets = new Set<Socket>();
  // The payload limit itself is the ACL hook's (it counts and names the refusal); the gate
  // only keeps a packet that could never pass it from being buffered at all.
  const limits: PacketGateLimits = {
    maxConnectBytes: DEFAULT_MAX_CONNECT_BYTES,
    maxPacketBytes: maxPayloadBytes + PUBLISH_OVERHEAD_BYTES,
  };
  const server = createServer({ noDelay: true }, (socket) =>
    acceptConnection(aedes, sockets, socket, limits, counters),
  );
  try {
    await listen(server, host, port);
  } catch (err) {
    await closeAedes(aedes);
    throw new AppError(
      ErrorCodes.BROKER_FAILED,
      `broker: cannot listen on ${host}:${port}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return { aedes, server, sockets, subscribed };
}

/** Filters granted since the broker started, to know when clients are back after a restart. */
class SubscriptionLog {
  readonly #seen = new Set<string>();
  #waiters: Array<() => void> = [];

  add(filters: readonly string[]): void {
    for (const f of filters) this.#seen.add(f);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  waitFor(filters: readonly string[], timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new AppError(ErrorCodes.TIMEOUT, `broker: clients did not resubscribe within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = (): void => {
        if (filters.every((f) => this.#seen.has(f))) {
          clearTimeout(timer);
          resolve();
        } else this.#waiters.push(check);
      };
      check();
    });
  }
}

/** `connections` and refusals are counted by the policy hooks, which see every CONNECT. */
function countTraffic(aedes: Aedes, counters: BrokerStats, onPublish?: (topic: string, payload: Buffer) => void): void {
  // Broker-internal publishes ($SYS heartbeats) have no client and are not traffic.
  aedes.on('publish', (packet, client) => {
    if (client === null) return;
    counters.published++;
    onPublish?.(packet.topic, Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload));
  });
}

function acceptConnection(
  aedes: Aedes,
  sockets: Set<Socket>,
  socket: Socket,
  limits: PacketGateLimits,
  counters: BrokerStats,
): void {
  // Small request/ack round trips on localhost: Nagle + delayed ACK would add ~40 ms each.
  socket.setNoDelay(true);
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
  const conn = gatedConnection(socket, limits, (refusal) => {
    if (refusal.kind === 'connect-too-large') counters.refusedAuth++;
    else counters.refusedAcl++;
  });
  aedes.handle(conn);
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** server.close() waits for open sockets, so clients are closed by the broker and stragglers destroyed. */
async function shutdown(server: Server, aedes: Aedes, sockets: Set<Socket>): Promise<void> {
  const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
  await closeAedes(aedes);
  for (const socket of sockets) socket.destroy();
  await serverClosed;
}

function closeAedes(aedes: Aedes): Promise<void> {
  return new Promise((resolve) => aedes.close(() => resolve()));
}
