import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP endpoint for engine tests: records every request in arrival order, and
 * answers with what `respond` says (deterministic from the request, so runs repeat).
 */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TestReceiver {
  url: string;
  port: number;
  received: Received[];
  respond: (r: Received, attempt: number) => { status: number; headers?: Record<string, string>; delayMs?: number };
  /** Stops accepting connections (the endpoint is down) and drops open ones. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestReceiver(): Promise<TestReceiver> {
  const attempts = new Map<string, number>();
  let server: Server;
  const r: TestReceiver = {
    url: '',
    port: 0,
    received: [],
    respond: () => ({ status: 204 }),
    async down() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    async up() {
      server = make();
      await new Promise<void>((resolve) => server.listen(r.port, '127.0.0.1', () => resolve()));
    },
    close: () => r.down(),
  };
  const make = (): Server =>
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const got: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        r.received.push(got);
        const id = String(req.headers['webhook-id']);
        const n = (attempts.get(id) ?? 0) + 1;
        attempts.set(id, n);
        const { status, headers, delayMs } = r.respond(got, n);
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(status, headers ?? {});
          res.end();
        }, delayMs ?? 0);
      });
    });
  server = make();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  return r;
}

/** A deterministic "fails this often" decision for a (delivery id, attempt). */
export function failsAt(rate: number, id: string, attempt: number): boolean {
  const h = createHash('sha256').update(`${id}|${attempt}`).digest();
  return h.readUInt32BE(0) / 2 ** 32 < rate;
}
