import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressPolicy } from './address-policy.js';
import { delayOf, hits, noFaults, type FaultCounts, type FaultKind, type WebhookFaults } from './faults.js';
import { parseIp } from './ip.js';
import type { Outcome } from './retry.js';
import { guardedLookup, Sender, type SenderOptions, type SendRequest } from './sender.js';
import { signatureHeader } from './signing.js';
import type { Subscription } from './subscription.js';
import { SEQUENCE_HEADER } from './consumer-state.js';

/**
 * The one hook where delivery faults are applied (issue 29 item 1): a `Sender` whose `send`
 * — one attempt of one delivery, as the engine makes it — may send it twice, hold it, send an
 * earlier revision of its minute first, or drop its connection mid-body. Everything above
 * (outbox, retries, records, counts) is the platform's ordinary path: a dropped attempt is
 * retried on the retry schedule, a held one is recorded when its answer comes.
 *
 * Which events are hit: `faults.ts` (a hash of seed, subscription, event id, fault). The
 * holding faults exclude each other — delay, then burst, then reorder, the first that hits —
 * so an event is held once; `duplicate` and `revise` combine with any (reorder with revise
 * holds the earlier revision instead, so it arrives after its event); `timeout` hits the
 * first attempt this process makes of the event and nothing else happens to that attempt.
 */
export interface FaultInjectorOptions extends SenderOptions {
  seed: number | string;
  /** The faults of a subscription; null: none (sent as the plain sender sends it). */
  faultsOf: (s: Subscription) => WebhookFaults | null;
  /** Whether the subscription's endpoint is down at this platform instant (`webhook_down` in the run's fault schedule). */
  downAt?: (s: Subscription, nowMs: number) => boolean;
}

interface Held {
  remaining: number;
  go: () => void;
}

/** How long a dropped request waits after its first half left before the socket is destroyed (so the endpoint reads a partial body). */
const DROP_AFTER_MS = 20;

export class FaultInjector extends Sender {
  readonly #seed: number | string;
  readonly #faultsOf: (s: Subscription) => WebhookFaults | null;
  readonly #downAt: NonNullable<FaultInjectorOptions['downAt']>;
  readonly #policy: AddressPolicy;
  readonly #lookup: SenderOptions['lookup'];
  readonly #counts = new Map<string, FaultCounts>();
  /** Events whose first attempt was dropped (`timeout`): the next attempt goes through. */
  readonly #dropped = new Set<string>();
  readonly #reordered = new Map<string, Held[]>();
  readonly #bursts = new Map<string, { held: Array<() => void>; timer: NodeJS.Timeout | null }>();

  constructor(o: FaultInjectorOptions) {
    super(o);
    this.#seed = o.seed;
    this.#faultsOf = o.faultsOf;
    this.#downAt = o.downAt ?? (() => false);
    this.#policy = o.policy;
    this.#lookup = o.lookup;
  }

  /** Faults applied so far to the subscription's attempts, per kind. */
  counts(subscriptionId: string): FaultCounts | null {
    return this.#counts.get(subscriptionId) ?? null;
  }

  override send(r: SendRequest): Promise<Outcome> {
    // A down endpoint, as a refused connection: nothing reaches it, and the attempt is retried on
    // the retry schedule. Timed by the platform's clock, so the same attempts are refused in every run.
    if (this.#downAt(r.subscription, r.nowMs)) {
      this.#count(r.subscription.id, 'down');
      return Promise.resolve({ kind: 'retryable', reason: 'connection refused (fault: webhook_down)' });
    }
    const f = this.#faultsOf(r.subscription);
    if (!f) return super.send(r);
    const sub = r.subscription.id;
    const id = r.headers['webhook-id'] ?? '';
    const hit = (k: FaultKind, rate: number | undefined): boolean =>
      rate !== undefined && hits(this.#seed, sub, id, k, rate);
    if (hit('timeout', f.timeout?.rate) && !this.#dropped.has(`${sub}|${id}`)) {
      this.#dropped.add(`${sub}|${id}`);
      this.#count(sub, 'timeout');
      return this.#dropMidBody(r);
    }
    this.#dropped.delete(`${sub}|${id}`);
    const earlier = hit('revise', f.revise?.rate) ? earlierRevision(r) : null;
    if (earlier) this.#count(sub, 'revise');
    const duplicate = hit('duplicate', f.duplicate?.rate);
    if (duplicate) this.#count(sub, 'duplicate');
    const reorder = f.reorder !== undefined && hit('reorder', f.reorder.rate);
    const window = f.reorder?.window ?? 1;
    // With an earlier revision, reordering holds the revision, not the event: the older value
    // then arrives after the newer one, as a retried older revision does.
    if (reorder && earlier) this.#count(sub, 'reorder');
    const go = (immediate: boolean): Promise<Outcome> => {
      // The earlier revision first, on the same pipelined connection: it arrives before the event.
      if (earlier && !reorder) void super.send(earlier);
      const outcome = super.send(r);
      if (duplicate) void super.send(r);
      if (immediate) this.#sentPast(sub);
      if (earlier && reorder) this.#holdForReorder(sub, window, () => void super.send(earlier));
      return outcome;
    };
    if (f.delay && hit('delay', f.delay.rate)) {
      this.#count(sub, 'delay');
      const ms = delayOf(this.#seed, sub, id, f.delay);
      return new Promise((resolve) => setTimeout(() => resolve(go(false)), ms));
    }
    if (f.burst && hit('burst', f.burst.rate)) {
      this.#count(sub, 'burst');
      return new Promise((resolve) =>
        this.#holdForBurst(sub, f.burst as NonNullable<WebhookFaults['burst']>, () => resolve(go(false))),
      );
    }
    if (reorder && !earlier) {
      this.#count(sub, 'reorder');
      return new Promise((resolve) => this.#holdForReorder(sub, window, () => resolve(go(false))));
    }
    return go(true);
  }

  /** Held until `window` later requests of the subscription went, or the turn's requests are out (a round is dispatched in one turn). */
  #holdForReorder(sub: string, window: number, go: () => void): void {
    let held = this.#reordered.get(sub);
    if (!held) {
      this.#reordered.set(sub, (held = []));
      // What a round did not release by its end goes then: a round never waits for a later one.
      setImmediate(() => {
        const rest = this.#reordered.get(sub) ?? [];
        this.#reordered.delete(sub);
        for (const h of rest) h.go();
      });
    }
    held.push({ remaining: window, go });
  }

  /** A request went out past the held ones: those whose window is spent go now, right behind it. */
  #sentPast(sub: string): void {
    const held = this.#reordered.get(sub);
    if (!held) return;
    const due = held.filter((h) => --h.remaining <= 0);
    if (due.length === 0) return;
    this.#reordered.set(
      sub,
      held.filter((h) => h.remaining > 0),
    );
    for (const h of due) h.go();
  }

  #holdForBurst(sub: string, b: { size: number; holdMs: number }, go: () => void): void {
    let burst = this.#bursts.get(sub);
    if (!burst) this.#bursts.set(sub, (burst = { held: [], timer: null }));
    const state = burst;
    const release = (): void => {
      if (state.timer) clearTimeout(state.timer);
      state.timer = null;
      const all = state.held.splice(0);
      for (const g of all) g();
    };
    state.held.push(go);
    if (state.held.length >= b.size) release();
    else state.timer ??= setTimeout(release, b.holdMs);
  }

  /**
   * The request on a connection of its own, its headers and half its body written, then the
   * socket destroyed: the endpoint sees a request cut mid-body (a client that timed out), the
   * platform a failed attempt to retry. Only to an address the policy allows (a literal one is
   * checked here, a name by the guarded lookup); otherwise the plain sender's refusal.
   */
  #dropMidBody(r: SendRequest): Promise<Outcome> {
    const url = new URL(r.subscription.endpoint.url);
    const literal = parseIp(url.hostname.replace(/^\[|\]$/g, ''));
    if ((literal && !this.#policy.checkIp(literal).ok) || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      return super.send(r);
    const body = Buffer.from(r.body);
    return new Promise<Outcome>((resolve) => {
      let done = false;
      const end = (): void => {
        if (done) return;
        done = true;
        resolve({ kind: 'retryable', reason: 'connection dropped mid-request (fault: timeout)' });
      };
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        agent: false,
        lookup: guardedLookup(this.#policy, this.#lookup),
        headers: { ...r.headers, 'content-length': String(body.length) },
      });
      req.on('error', end);
      req.on('close', end);
      req.write(body.subarray(0, body.length >> 1), () => setTimeout(() => req.destroy(), DROP_AFTER_MS));
    });
  }

  #count(sub: string, k: FaultKind | 'down'): void {
    let c = this.#counts.get(sub);
    if (!c) this.#counts.set(sub, (c = noFaults()));
    c[k] = (c[k] ?? 0) + 1;
  }
}

/**
 * An earlier revision of a `_1M` minute: the same envelope with another id and another value
 * (one more person), signed as the event is, its sequence just before the event's. Null for
 * an event that is not a `_1M` one with a numeric value.
 */
function earlierRevision(r: SendRequest): SendRequest | null {
  let e: { id: string; type: string; data: unknown };
  try {
    e = JSON.parse(r.body) as typeof e;
  } catch {
    return null;
  }
  if (typeof e.type !== 'string' || !e.type.endsWith('_1M') || typeof e.data !== 'number') return null;
  const id = `event_${createHash('sha256').update(`revise|${e.id}`).digest('hex').slice(0, 32)}`;
  const body = JSON.stringify({ ...e, id, data: e.data + 1 });
  const timestampS = Number(r.headers['webhook-timestamp']);
  const sequence = Number(r.headers[SEQUENCE_HEADER]);
  return {
    ...r,
    body,
    headers: {
      ...r.headers,
      'webhook-id': id,
      'webhook-signature': signatureHeader(r.subscription.secrets, id, timestampS, body),
      [SEQUENCE_HEADER]: String(Number.isFinite(sequence) ? sequence - 0.5 : 0),
    },
  };
}
