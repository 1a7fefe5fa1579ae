import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * Misbehaving webhook endpoints over loopback TCP, for the isolation and retry-discipline tests
 * (issue 33 items 2–4). Each counts the requests that reached it on the wire, by `webhook-id`
 * (every request head in what arrived, pipelined ones included), and when each connection closed.
 */
export type Fault = 'hang' | 'reset' | 'trickle-body' | 'trickle-headers' | 'huge-body';

export interface FaultyEndpoint {
  url: string;
  /** Requests seen on the wire, per webhook-id. */
  seen: Map<string, number>;
  /** Wall ms from a connection's first request byte to its close (what one attempt held the socket). */
  held: number[];
  close(): Promise<void>;
}

const ID = /webhook-id: *([^\r\n]+)/gi;

/** Counts the request heads in `text` not counted before (a head split across chunks is counted once complete). */
function countHeads(text: string, from: number, seen: Map<string, number>): number {
  let end = from;
  for (let at = text.indexOf('\r\n\r\n', from); at >= 0; at = text.indexOf('\r\n\r\n', at + 4)) {
    const head = text.slice(end, at);
    ID.lastIndex = 0;
    const m = ID.exec(head);
    if (m?.[1]) seen.set(m[1], (seen.get(m[1]) ?? 0) + 1);
    end = at + 4;
  }
  return end;
}

/** `hugeBytes`: the body of a 'huge-body' answer (default 8 MiB). */
export async function startFaultyEndpoint(fault: Fault, hugeBytes = 8 << 20): Promise<FaultyEndpoint> {
  const seen = new Map<string, number>();
  const held: number[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    let text = '';
    let counted = 0;
    let started = 0;
    let answering = false;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      if (started > 0) held.push(performance.now() - started);
    });
    socket.on('data', (chunk: Buffer) => {
      if (started === 0) started = performance.now();
      // Bodies are JSON without CRLFCRLF: every blank line ends a request head.
      text += chunk.toString('latin1');
      const next = countHeads(text, counted, seen);
      const arrived = next > counted;
      counted = next;
      if (!arrived || answering) return;
      answering = true;
      if (fault === 'reset') socket.resetAndDestroy();
      else if (fault === 'trickle-body') {
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n');
        trickle(socket, 'x'.repeat(1000));
      } else if (fault === 'trickle-headers') trickle(socket, 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
      else if (fault === 'huge-body') answerHuge(socket, text, hugeBytes);
      // 'hang': never answers.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    held,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One byte a second until `text` is out or the peer is gone. */
function trickle(socket: Socket, text: string): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++] as string);
  }, 1000);
  socket.on('close', () => clearInterval(timer));
}

/** 200 with a `bytes` body to every request, in order (keep-alive, pipelined requests answered one after another). */
function answerHuge(socket: Socket, first: string, bytes: number): void {
  const body = Buffer.alloc(bytes, 0x61);
  let answered = 0;
  const answerAll = (text: string): void => {
    const heads = text.split('\r\n\r\n').length - 1;
    for (; answered < heads; answered++) {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`);
      socket.write(body);
    }
  };
  let text = first;
  answerAll(text);
  socket.on('data', (c: Buffer) => {
    text += c.toString('latin1');
    answerAll(text);
  });
}

/** A healthy endpoint: 204 at once (or `answerAfterMs` after each request's end); the wall instant each webhook-id first arrived. */
export interface HealthyEndpoint {
  url: string;
  arrivedAt: Map<string, number>;
  close(): Promise<void>;
}

/**
 * `answerAfterMs`: a slow endpoint that still answers every request in time (issue 33 item 2's
 * gap): each answer is given that long after its request arrived, the requests pipelined on a
 * connection waiting together (100 ms with 16 in flight: 160 answers a second).
 */
export async function startHealthyEndpoint(answerAfterMs = 0): Promise<HealthyEndpoint> {
  const arrivedAt = new Map<string, number>();
  const server: HttpServer = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (!arrivedAt.has(id)) arrivedAt.set(id, performance.now());
      res.statusCode = 204;
      if (answerAfterMs > 0) setTimeout(() => res.end(), answerAfterMs);
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivedAt,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
