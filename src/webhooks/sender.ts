import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Socket } from 'node:net';
import { buildConnector, Client } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { parseIp } from './ip.js';
import type { AnswerTimes } from './answer-times.js';
import { AttemptHandler } from './attempt-handler.js';
import type { Outcome } from './retry.js';
import type { Subscription } from './subscription.js';

/**
 * The HTTP adapter of delivery: one undici `Client` per subscription, destination origin,
 * concurrency limit (webhooks/concurrency.ts) and `http_timeout` — a delivery lane (lanes.ts,
 * `laneOf`) — kept alive and pipelined (HTTP/1.1) as deep as the limit. No two subscriptions
 * share a connection, not even two of one organisation to one origin: a pipelined connection
 * answers in order, so a request queued behind another subscription's backlog at a slow
 * endpoint would wait for all of it (issue 33 item 2). Each attempt is one dispatch
 * (attempt-handler.ts: never re-sent by undici, bounded by `http_timeout` from dispatch to the
 * last byte, its answer read up to 64 KiB). One connection per subscription keeps the order in
 * which its bodies reach the receiver the order they were sent, which is what makes each
 * subscription's `--speed max` deliveries byte-identical across runs. Every connection resolves
 * its host through `guardedLookup`, so a DNS name that resolves to a refused address is refused
 * at connection time; redirects are never followed.
 */
export interface SendRequest {
  subscription: Subscription;
  body: string;
  headers: Record<string, string>;
  nowMs: number;
}

export interface SenderOptions {
  policy: AddressPolicy;
  /** Requests in flight per endpoint (pipelining depth of its connection), unless `concurrencyOf` says otherwise. */
  concurrency: number;
  /** A subscription's own limit (a scenario's `webhooks[].concurrency`); undefined: `concurrency`. */
  concurrencyOf?: (subscriptionId: string) => number | undefined;
  /** Test seam for DNS (default: the system resolver). */
  lookup?: typeof dnsLookup;
  /** Where each answer's written → answered wall time goes (perf only). */
  answerTimes?: AnswerTimes;
}

/** A `net.connect` lookup that refuses a name when any of its addresses is refused. */
export function guardedLookup(policy: AddressPolicy, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      for (const a of addresses) {
        const ip = parseIp(a.address);
        const verdict = ip ? policy.checkIp(ip) : { ok: false as const, why: `${a.address} is not an address` };
        if (!verdict.ok) {
          const refusal = Object.assign(new Error(`${hostname} resolves to a refused address: ${verdict.why}`), {
            code: 'WEBHOOK_FORBIDDEN_ADDRESS',
          });
          return callback(refusal, '', 0);
        }
      }
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      // Node 20 asks with all: true when autoSelectFamily is on; answer in the form asked for.
      if ((options as { all?: boolean }).all)
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

export class Sender {
  readonly #o: SenderOptions;
  readonly #clients = new Map<string, Map<string, Client>>();
  /** Per URL: where to send, and the literal address's verdict (the policy is frozen, so it cannot change). */
  readonly #targets = new Map<string, { origin: string; path: string; refused: string | null }>();
  /** Auth headers per subscription object (a change of the subscription is a new object). */
  readonly #auth = new WeakMap<Subscription, Record<string, string> | null>();
  /** Lane per subscription object (on the per-delivery path). */
  readonly #laneOf = new WeakMap<Subscription, string>();

  constructor(o: SenderOptions) {
    this.#o = o;
  }

  /**
   * The lane of a subscription: its own connection to its origin, pipelined as deep as its
   * limit, with its timeout (a new URL, limit or timeout is a new connection); the engine runs
   * one delivery loop per lane.
   */
  laneOf(s: Subscription): string {
    let lane = this.#laneOf.get(s);
    if (lane === undefined) {
      const depth = this.#o.concurrencyOf?.(s.id) ?? this.#o.concurrency;
      this.#laneOf.set(
        s,
        (lane = `${s.orgId} ${s.id} ${this.#target(s.endpoint.url).origin} ${depth}/${s.endpoint.httpTimeoutMs}`),
      );
    }
    return lane;
  }

  /** The connection of lane `lane` (`laneOf`) to `origin`. */
  #client(lane: string, origin: string, depth: number, timeoutMs: number): Client {
    let byLimits = this.#clients.get(origin);
    if (!byLimits) this.#clients.set(origin, (byLimits = new Map()));
    let c = byLimits.get(lane);
    if (!c) {
      c = new Client(origin, {
        pipelining: depth,
        keepAliveTimeout: 30_000,
        connect: writesPerTurn(
          buildConnector({ lookup: guardedLookup(this.#o.policy, this.#o.lookup), timeout: timeoutMs }),
        ),
      });
      byLimits.set(lane, c);
    }
    return c;
  }

  /** One attempt; never throws: every failure is an Outcome (retryable or permanent). */
  #target(href: string): { origin: string; path: string; refused: string | null } {
    let t = this.#targets.get(href);
    if (!t) {
      const url = new URL(href);
      const literal = parseIp(url.hostname);
      // Checked when the subscription was saved; this policy's allow list may differ from that one's.
      const v = literal ? this.#o.policy.checkIp(literal) : { ok: true as const };
      t = { origin: url.origin, path: url.pathname + url.search, refused: v.ok ? null : v.why };
      this.#targets.set(href, t);
    }
    return t;
  }

  send(r: SendRequest): Promise<Outcome> {
    const target = this.#target(r.subscription.endpoint.url);
    if (target.refused !== null)
      return Promise.resolve({ kind: 'permanent', reason: `refused address: ${target.refused}` });
    const timeout = r.subscription.endpoint.httpTimeoutMs;
    const depth = this.#o.concurrencyOf?.(r.subscription.id) ?? this.#o.concurrency;
    return new Promise<Outcome>((resolve) => {
      const handler = new AttemptHandler(timeout, r.nowMs, resolve, this.#o.answerTimes ?? null);
      try {
        this.#client(this.laneOf(r.subscription), target.origin, depth, timeout).dispatch(
          {
            method: 'POST',
            path: target.path,
            headers: this.#withAuth(r.subscription, r.headers),
            body: r.body,
            // undici pipelines only requests marked idempotent and not blocking (a POST is neither
            // by default: then one request at a time, whatever `pipelining` says). A delivery is
            // idempotent by contract — the receiver dedupes by webhook-id. undici would also
            // re-send such requests after a broken connection: the handler refuses that, so every
            // request on the wire is one attempt of the retry schedule (attempt-handler.ts).
            idempotent: true,
            blocking: false,
            // The handler's timer bounds the whole attempt; undici's own are a backstop.
            headersTimeout: timeout,
            bodyTimeout: timeout,
          },
          handler,
        );
      } catch (err) {
        handler.onError(err as Error);
      }
    });
  }

  /** The request's headers with the endpoint's auth ones, computed once per subscription state (base64 of basic auth included). */
  #withAuth(s: Subscription, headers: Record<string, string>): Record<string, string> {
    let auth = this.#auth.get(s);
    if (auth === undefined) {
      const h = authHeaders(s);
      auth = Object.keys(h).length === 0 ? null : h;
      this.#auth.set(s, auth);
    }
    return auth === null ? headers : { ...headers, ...auth };
  }

  /** Cuts the connection of lane `lane` (`laneOf`): its attempts in flight end as failures now; the next send connects again. */
  async closeLane(lane: string): Promise<void> {
    for (const byLane of this.#clients.values()) {
      const c = byLane.get(lane);
      if (!c) continue;
      byLane.delete(lane);
      await c.destroy();
    }
  }

  /**
   * Closes the connections of lanes not in `live` (a deleted, disabled or changed subscription):
   * one connection per subscription would otherwise pile up over a served platform's changes.
   * Graceful: requests still in flight on them end as usual.
   */
  retire(live: ReadonlySet<string>): void {
    for (const [origin, byLane] of this.#clients) {
      for (const [lane, c] of byLane) {
        if (live.has(lane)) continue;
        byLane.delete(lane);
        c.close().catch(() => undefined);
      }
      if (byLane.size === 0) this.#clients.delete(origin);
    }
  }

  async close(): Promise<void> {
    const clients = [...this.#clients.values()].flatMap((byDepth) => [...byDepth.values()]);
    this.#clients.clear();
    await Promise.all(clients.map((c) => c.destroy()));
  }
}

/**
 * A connector whose sockets send the requests of one turn of the event loop in one write:
 * undici writes each pipelined request as it dispatches it (one `writev` per request), so
 * a round's requests reached the receiver one by one and each woke it. The socket is held
 * corked from its first write of a turn until the turn ends (a `nextTick`), undici's own
 * cork/uncork per request nesting inside; nothing waits longer than the turn that wrote it.
 */
export function writesPerTurn(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      const socket = args[1];
      if (socket) holdWritesForTheTurn(socket);
      callback(...args);
    });
}

function holdWritesForTheTurn(socket: Socket): void {
  const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
  let held = false;
  const release = (): void => {
    held = false;
    if (!socket.destroyed) socket.uncork();
  };
  socket.write = ((...a: unknown[]): boolean => {
    if (!held) {
      held = true;
      socket.cork();
      process.nextTick(release);
    }
    return write(...a);
  }) as Socket['write'];
}

/** api_key and basic_auth of platform-reference §4, as request headers. */
export function authHeaders(s: Subscription): Record<string, string> {
  const h: Record<string, string> = {};
  const { apiKey, basicAuth } = s.endpoint;
  if (apiKey) h[apiKey.key] = apiKey.value;
  if (basicAuth)
    h.authorization = `Basic ${Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString('base64')}`;
  return h;
}
