import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answersPerTurn } from './answers-per-turn.js';
import { ConsumerState, SEQUENCE_HEADER, stateNdjson, type ApplyMode, type StateEvent } from './consumer-state.js';
import { verify } from './signing.js';

/**
 * `occusim receive`: a webhook endpoint for trying the platform out and for retry tests. It
 * verifies Standard Webhooks signatures (401 when none verifies: the platform dead-letters
 * it), dedupes by `webhook-id` (a retried delivery the receiver already has is acknowledged and
 * not written again), counts per event type, and appends each new body to an NDJSON file in
 * arrival order. `failRate` answers that share of attempts with 500, chosen by a hash of
 * (seed, id, attempt), so a misbehaving run repeats exactly; `latencyMs` delays every answer.
 *
 * The timestamp check is off unless `toleranceS` is given (with `nowS`, the receiver's wall
 * clock): `occusim receive` gives the standard 5 minutes, as the platform stamps wall time by
 * default; `--no-timestamp-check` leaves it off for `--webhook-timestamps simulated` runs.
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
  /** Ids remembered for the dedupe (the oldest forgotten beyond it); default DEDUPE_IDS. */
  dedupeIds?: number;
  /**
   * Fold each accepted request into the state a consumer of this kind holds (webhooks/consumer-state.ts),
   * answered at `GET /state` as NDJSON and written to `stateOut` at close.
   */
  apply?: ApplyMode;
  stateOut?: string;
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

/**
 * Ids the dedupe remembers: the oldest is forgotten beyond this, so a receiver left running
 * for hours holds bounded memory (~100 bytes an id: ~100 MB). A duplicate comes from a retry
 * of a delivery whose answer was lost (a timeout, a dropped connection), seconds after the
 * first copy; a million ids is a minute of the fastest stream measured (16,000/s), so a retry
 * that arrives after more than a million newer events is written again.
 */
export const DEDUPE_IDS = 1_000_000;

/** A body larger than this is answered 413 (the platform's largest envelope is a few KB). */
export const MAX_BODY_BYTES = 1 << 20;
const NEWLINE = Buffer.from('\n');
/** NDJSON held at most this long before it is written (a user tailing the file sees it this late). */
export const NDJSON_FLUSH_MS = 50;
/** ... or until this many bytes are held (at most ~1,700 platform envelopes). */
const NDJSON_FLUSH_BYTES = 1 << 20;

/**
 * The NDJSON output: lines gathered for up to NDJSON_FLUSH_MS (or NDJSON_FLUSH_BYTES) and
 * written as one buffer. A file write goes through libuv's thread pool — a hand-off to a pool
 * thread and a wake-up of the event loop for its completion, ~10 µs of CPU whatever its size —
 * so one write per turn of the event loop cost a receiver fed in small pipelined bursts several
 * µs per delivery (bench/README.md, webhooks, "wh-recv"); one write per interval costs nothing
 * per delivery. Order is arrival order; `end` writes what is held before closing, so a
 * receiver closed normally (SIGINT/SIGTERM, `close()`) has every line it acknowledged on disk.
 * The lines of a receiver killed outright (SIGKILL) in the last interval are lost with it —
 * as the write in flight was before.
 */
class LinesPerInterval {
  private held: Buffer[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly stream: WriteStream) {}

  add(body: Buffer): void {
    this.held.push(body, NEWLINE);
    this.bytes += body.length + 1;
    if (this.bytes >= NDJSON_FLUSH_BYTES) this.flush();
    else this.timer ??= setTimeout(this.flush, NDJSON_FLUSH_MS);
  }

  private readonly flush = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.held.length === 0) return;
    // One buffer: one write request, not one Writable entry per line.
    const chunk = Buffer.concat(this.held, this.bytes);
    this.held = [];
    this.bytes = 0;
    this.stream.write(chunk);
  };

  end(): Promise<void> {
    this.flush();
    return new Promise<void>((resolve) => this.stream.end(() => resolve()));
  }
}

const TYPE_KEY = Buffer.from('"type"');
const ID_KEY = Buffer.from('"id"');
const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * The `type` of a platform envelope read at its fixed place: the platform writes the envelope
 * with `id` first and `type` second (webhooks/fan-out.ts `bodyOf`), so the type is the bytes
 * after `{"id":"<id>","type":"`. The receiver reads it there instead of parsing the whole body
 * (a JSON.parse of every 600-byte body was a tenth of its CPU per delivery), signed or not,
 * so a plain endpoint's cost differs from a verifying one's by the verification alone.
 * Anything else — another layout, an escaped id, a type that is not an upper-case token —
 * returns null, and the caller parses the body as JSON. A body that is not JSON but begins
 * like an envelope is counted under the type it begins with (a mislabelled count, never a
 * lost body: it is written to the NDJSON as received either way).
 *
 * For any valid JSON a non-null answer is JSON.parse's `type` (a property in
 * test/webhooks/receiver.test.ts): `{"id":"…","type":"T"` can only be overridden by a later key
 * `type` (JSON.parse keeps the last of duplicate keys), and such a key is spelt either
 * `"type"` or with a `\u` escape; a body holding either after `T` is left to JSON.parse.
 */
export function envelopeType(body: Buffer): string | null {
  const n = body.length;
  if (
    n < 20 ||
    body[0] !== 0x7b ||
    body[1] !== 0x22 ||
    body[2] !== 0x69 ||
    body[3] !== 0x64 ||
    body[4] !== 0x22 ||
    body[5] !== 0x3a ||
    body[6] !== 0x22
  )
    return null; // {"id":"
  let i = 7;
  for (; i < n && body[i] !== 0x22; i++) if (body[i] === 0x5c) return null; // an escape: leave it to JSON.parse
  const TYPE = '","type":"';
  for (let k = 0; k < TYPE.length; k++, i++) if (body[i] !== TYPE.charCodeAt(k)) return null;
  const start = i;
  for (; i < n && i - start <= 64; i++) {
    const c = body[i] as number;
    if (c === 0x22) {
      if (i === start || body.indexOf(TYPE_KEY, i) >= 0 || body.indexOf(UNICODE_ESCAPE, i) >= 0) return null;
      return body.toString('latin1', start, i);
    }
    if (!((c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f)) return null; // [A-Z0-9_]
  }
  return null;
}

/** Sets `key` in `m`, forgetting the oldest key (a Map iterates in insertion order) beyond `max`. */
function remember<V>(m: Map<string, V>, key: string, value: V, max: number): void {
  if (!m.has(key) && m.size >= max) {
    const oldest = m.keys().next();
    if (oldest.done !== true) m.delete(oldest.value);
  }
  m.set(key, value);
}

/**
 * The `id` of a JSON body sent without `webhook-id`: read at the envelope's fixed place
 * (`{"id":"…"` with no escape in it, the platform's layout) when no later `"id"` key or `\u`
 * escape could override it, else parsed; null when the body is not JSON or its `id` is not a
 * string (such a body is never a duplicate).
 */
export function envelopeId(body: Buffer): string | null {
  const n = body.length;
  if (
    n >= 8 &&
    body[0] === 0x7b &&
    body[1] === 0x22 &&
    body[2] === 0x69 &&
    body[3] === 0x64 &&
    body[4] === 0x22 &&
    body[5] === 0x3a &&
    body[6] === 0x22
  ) {
    let i = 7;
    for (; i < n && body[i] !== 0x22 && body[i] !== 0x5c && body[i]! >= 0x20; i++);
    if (i < n && body[i] === 0x22 && body.indexOf(ID_KEY, i) < 0 && body.indexOf(UNICODE_ESCAPE, i) < 0) {
      // Only for a body that is JSON: the fast read must not name a body JSON.parse refuses.
      const rest = body[i + 1];
      if (rest === 0x2c || rest === 0x7d) return body.toString('utf8', 7, i);
    }
  }
  try {
    const id = (JSON.parse(body.toString('utf8')) as { id?: unknown } | null)?.id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

/** The `type` of a JSON body, `UNKNOWN` when it is not JSON or has none. */
function parsedType(body: Buffer): string {
  try {
    return String((JSON.parse(body.toString('utf8')) as { type?: unknown }).type ?? 'UNKNOWN');
  } catch {
    // Counted as UNKNOWN: the platform only sends JSON, so this is someone else's request.
    return 'UNKNOWN';
  }
}

/** One request into the state: the body parsed (a body that is not an envelope is counted as skipped). */
function applyTo(state: ConsumerState, id: string | null, sequence: string | undefined, body: Buffer): void {
  let e: StateEvent;
  try {
    e = JSON.parse(body.toString('utf8')) as StateEvent;
  } catch {
    state.skipped++;
    return;
  }
  if (typeof e !== 'object' || e === null || typeof e.metadata !== 'object' || e.metadata === null) {
    state.skipped++;
    return;
  }
  const seq = sequence === undefined ? NaN : Number(sequence);
  state.apply(id, Number.isFinite(seq) ? seq : null, e);
}

/** Deterministic coin for (seed, id, attempt): the same run fails the same attempts. */
export function failsOn(rate: number, seed: number | string, id: string, attempt: number): boolean {
  if (rate <= 0) return false;
  const h = createHash('sha256').update(`${seed}|${id}|${attempt}`).digest();
  return h.readUInt32BE(0) / 2 ** 32 < rate;
}

/** What the receiver's request handling shares: its options, figures and dedupe memory. */
interface Inbox {
  readonly o: ReceiverOptions;
  readonly stats: ReceiverStats;
  readonly dedupeIds: number;
  readonly seen: Map<string, true>;
  readonly attempts: Map<string, number>;
  readonly out: LinesPerInterval | null;
  readonly verifying: boolean;
  readonly failRate: number;
  readonly state: ConsumerState | null;
}

export async function startReceiver(o: ReceiverOptions): Promise<Receiver> {
  const dedupeIds = o.dedupeIds ?? DEDUPE_IDS;
  const inbox: Inbox = {
    o,
    stats: { requests: 0, byType: {}, unique: 0, duplicates: 0, badSignatures: 0, failed: 0 },
    dedupeIds,
    seen: new Map(),
    attempts: new Map(),
    out: o.out ? new LinesPerInterval(createWriteStream(o.out, { flags: 'a' })) : null,
    verifying: o.secrets.length > 0,
    failRate: o.failRate ?? 0,
    state: o.apply ? new ConsumerState(o.apply, dedupeIds) : null,
  };
  const { stats, out, state } = inbox;
  const server: Server = createServer((req, res) => handle(inbox, req, res));
  // A pipelined turn's answers in one write, not one write (and one wake-up of the client) each.
  server.on('connection', answersPerTurn);
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
      if (out) await out.end();
      if (state && o.stateOut) await writeFile(o.stateOut, stateNdjson(state.rows()));
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** One request: GET /state, or a delivery answered once its whole body is in. */
function handle(r: Inbox, req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET') {
    if (r.state && (req.url === '/state' || req.url?.startsWith('/state?'))) {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(stateNdjson(r.state.rows()));
    } else send(res, 404);
    req.resume();
    return;
  }
  // The body in the chunk it came in (a delivery is one chunk): no array copy for one chunk.
  let first: Buffer | null = null;
  let more: Buffer[] | null = null;
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_BODY_BYTES) return; // answered 413 at the end; nothing more is held
    if (first === null) first = c;
    else (more ??= [first]).push(c);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return reply(r.o, res, 413);
    let status: number;
    try {
      status = answer(r, req, more ? Buffer.concat(more) : (first ?? Buffer.alloc(0)));
    } catch {
      status = 400; // a request nothing above expected: answered, never a crash of the receiver
    }
    reply(r.o, res, status);
  });
  req.on('error', () => {
    if (!res.headersSent) send(res, 400);
  });
}

/** A delivery's status: 401 for a bad signature, 500 when failed on purpose, else 200 (counted as new or duplicate). */
function answer(r: Inbox, req: IncomingMessage, body: Buffer): number {
  const { stats } = r;
  stats.requests++;
  // A platform delivery carries `webhook-id`; a plain POST (another sender, the bench's
  // baseline) is deduped by its envelope's `id`, and a body with neither is always new.
  const headerId = header(req, 'webhook-id');
  const id = headerId ?? envelopeId(body);
  if (r.verifying && !signedWell(r.o, req, headerId, body)) {
    stats.badSignatures++;
    return 401;
  }
  // Attempts are counted only to fail them on purpose: without --fail-rate no map grows per id.
  if (r.failRate > 0) {
    const attempt = (r.attempts.get(id ?? '') ?? 0) + 1;
    remember(r.attempts, id ?? '', attempt, r.dedupeIds);
    if (failsOn(r.failRate, r.o.seed ?? 0, id ?? '', attempt)) {
      stats.failed++;
      return 500;
    }
  }
  // Before the receiver's own dedupe: a naive consumer sees every copy; the state dedupes as its mode says.
  if (r.state) applyTo(r.state, headerId ?? id, header(req, SEQUENCE_HEADER), body);
  if (id !== null) {
    if (r.seen.has(id)) {
      stats.duplicates++;
      return 200;
    }
    remember(r.seen, id, true, r.dedupeIds);
  }
  stats.unique++;
  const type = envelopeType(body) ?? parsedType(body);
  stats.byType[type] = (stats.byType[type] ?? 0) + 1;
  r.out?.add(body);
  return 200;
}

/** The Standard Webhooks signature verifies with one of the receiver's secrets. */
function signedWell(o: ReceiverOptions, req: IncomingMessage, headerId: string | undefined, body: Buffer): boolean {
  const h = {
    'webhook-id': headerId,
    'webhook-timestamp': header(req, 'webhook-timestamp'),
    'webhook-signature': header(req, 'webhook-signature'),
  };
  const nowS = o.toleranceS === undefined ? Number(h['webhook-timestamp'] ?? 0) : (o.nowS?.() ?? 0);
  return verify(o.secrets, h, body, nowS, o.toleranceS ?? Infinity).ok;
}

// An empty answer with `Content-Length: 0`: `writeHead(status).end()` fixes the headers before
// the length is known and answers with a chunked empty body (one more chunk to frame and send).
function send(res: ServerResponse, status: number): void {
  res.statusCode = status;
  res.end();
}

function reply(o: ReceiverOptions, res: ServerResponse, status: number): void {
  if (o.latencyMs) setTimeout(send, o.latencyMs, res, status);
  else send(res, status);
}
