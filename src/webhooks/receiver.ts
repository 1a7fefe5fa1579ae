import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from './signing.js';

/**
 * `occusim receive`: a webhook endpoint for trying the platform out and for retry tests. It
 * verifies Standard Webhooks signatures (401 when none verifies: the platform dead-letters
 * it), dedupes by `webhook-id` (a retried delivery the receiver already has is acknowledged and
 * not written again), counts per event type, and appends each new body to an NDJSON file in
 * arrival order. `failRate` answers that share of attempts with 500, chosen by a hash of
 * (seed, id, attempt), so a misbehaving run repeats exactly; `latencyMs` delays every answer.
 *
 * The timestamp check is off by default: at `--speed max` `webhook-timestamp` is simulated
 * time, days away from this machine's clock. `toleranceS` turns it on (a live platform).
 */
export interface ReceiverOptions {
  port: number;
  host?: string;
  /** `whsec_` secrets; empty: signatures are not checked. */
  secrets: readonly string[];
  /** NDJSON of each new body; null: none written. */
  out: string | null;
  failRate?: number;
  latencyMs?: number;
  seed?: number | string;
  toleranceS?: number;
  /** Wall seconds for the timestamp check (only with toleranceS). */
  nowS?: () => number;
}

export interface ReceiverStats {
  requests: number;
  /** New events, by type. */
  byType: Record<string, number>;
  unique: number;
  duplicates: number;
  badSignatures: number;
  /** Attempts answered 500 on purpose (--fail-rate). */
  failed: number;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  stats(): ReceiverStats;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Deterministic coin for (seed, id, attempt): the same run fails the same attempts. */
export function failsOn(rate: number, seed: number | string, id: string, attempt: number): boolean {
  if (rate <= 0) return false;
  const h = createHash('sha256').update(`${seed}|${id}|${attempt}`).digest();
  return h.readUInt32BE(0) / 2 ** 32 < rate;
}

export async function startReceiver(o: ReceiverOptions): Promise<Receiver> {
  const stats: ReceiverStats = { requests: 0, byType: {}, unique: 0, duplicates: 0, badSignatures: 0, failed: 0 };
  const seen = new Set<string>();
  const attempts = new Map<string, number>();
  const out: WriteStream | null = o.out ? createWriteStream(o.out, { flags: 'a' }) : null;
  const header = (req: IncomingMessage, name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const answer = async (req: IncomingMessage): Promise<number> => {
    const body = await readBody(req);
    stats.requests++;
    const id = header(req, 'webhook-id') ?? '';
    if (o.secrets.length > 0) {
      const h = { 'webhook-id': id, 'webhook-timestamp': header(req, 'webhook-timestamp'), 'webhook-signature': header(req, 'webhook-signature') };
      const nowS = o.toleranceS === undefined ? Number(h['webhook-timestamp'] ?? 0) : (o.nowS?.() ?? 0);
      if (!verify(o.secrets, h, body, nowS, o.toleranceS ?? Infinity).ok) {
        stats.badSignatures++;
        return 401;
      }
    }
    const attempt = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, attempt);
    if (failsOn(o.failRate ?? 0, o.seed ?? 0, id, attempt)) {
      stats.failed++;
      return 500;
    }
    if (seen.has(id)) {
      stats.duplicates++;
      return 200;
    }
    seen.add(id);
    stats.unique++;
    let type = 'UNKNOWN';
    try {
      type = String((JSON.parse(body.toString('utf8')) as { type?: unknown }).type ?? 'UNKNOWN');
    } catch {
      // Counted as UNKNOWN: the platform only sends JSON, so this is someone else's request.
    }
    stats.byType[type] = (stats.byType[type] ?? 0) + 1;
    out?.write(`${body.toString('utf8')}\n`);
    return 200;
  };
  const server: Server = createServer((req, res) => {
    answer(req)
      .then(async (status) => {
        if (o.latencyMs) await new Promise((r) => setTimeout(r, o.latencyMs));
        res.writeHead(status).end();
      })
      .catch(() => res.writeHead(400).end());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}/`,
    port,
    stats: () => ({ ...stats, byType: { ...stats.byType } }),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (out) await new Promise<void>((resolve) => out.end(() => resolve()));
    },
  };
}
