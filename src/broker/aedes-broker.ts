import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Aedes } from 'aedes';
import { AppError, ErrorCodes } from '../core/errors.js';
import { buildCredentialTable } from './credentials.js';
import { policyHooks } from './hooks.js';

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
}

export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;

/** Starts an Aedes broker (MQTT 3.1.1 over TCP) with hive authentication and topic ACL. */
export async function startBroker(opts: BrokerOptions): Promise<EmbeddedBroker> {
  const counters: BrokerStats = { connections: 0, published: 0, refusedAuth: 0, refusedAcl: 0 };
  const credentials = buildCredentialTable(opts.hives, opts.services);
  const maxPayloadBytes = opts.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const aedes = await Aedes.createBroker(policyHooks({ credentials, maxPayloadBytes, counters }));
  countTraffic(aedes, counters);
  const sockets = new Set<Socket>();
  const server = createServer({ noDelay: true }, (socket) => acceptConnection(aedes, sockets, socket));
  const host = opts.host ?? '127.0.0.1';
  try {
    await listen(server, host, opts.port ?? 0);
  } catch (err) {
    await closeAedes(aedes);
    throw new AppError(ErrorCodes.BROKER_FAILED, `broker: cannot listen on ${host}:${opts.port ?? 0}: ${(err as Error).message}`, { cause: err });
  }
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `mqtt://${urlHost(host)}:${port}`,
    port,
    stats: () => ({ ...counters }),
    close: () => (closing ??= shutdown(server, aedes, sockets)),
  };
}

/** `connections` and refusals are counted by the policy hooks, which see every CONNECT. */
function countTraffic(aedes: Aedes, counters: BrokerStats): void {
  // Broker-internal publishes ($SYS heartbeats) have no client and are not traffic.
  aedes.on('publish', (_packet, client) => {
    if (client !== null) counters.published++;
  });
}

function acceptConnection(aedes: Aedes, sockets: Set<Socket>, socket: Socket): void {
  // Small request/ack round trips on localhost: Nagle + delayed ACK would add ~40 ms each.
  socket.setNoDelay(true);
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
  aedes.handle(socket);
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
