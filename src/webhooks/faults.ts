import { createHash } from 'node:crypto';

/**
 * Delivery faults a subscription suffers on purpose (issue 29 item 1), so a team can see its
 * consumer survive what real networks and a recomputing platform do: the same request twice,
 * out of order, late, in a burst, a minute revised, a connection dropped mid-request.
 *
 * Which events a fault hits is a pure function of (seed, subscription id, event id, fault):
 * a hash, not a stream drawn in delivery order, so the same events are hit in every run of
 * the same seed whatever the thread layout, the round sizes or the timing. Declared per
 * subscription in a scenario's `webhooks[].faults` (checked with file:line by the scenario
 * schema) or for every subscription with `--webhook-faults` (parsed here).
 */
export const FAULT_KINDS = ['duplicate', 'reorder', 'delay', 'burst', 'revise', 'timeout'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface WebhookFaults {
  /** The same request (`webhook-id`, body) sent again right after the first. */
  duplicate?: { rate: number };
  /** Held until `window` later requests of the subscription have gone (or the round's requests are out). */
  reorder?: { rate: number; window: number };
  /** Held a uniform draw in [minMs, maxMs] of wall time before it is sent. */
  delay?: { rate: number; minMs: number; maxMs: number };
  /** Held until `size` held requests of the subscription gather, or `holdMs` passed; then all go at once. */
  burst?: { rate: number; size: number; holdMs: number };
  /** A `_1M` event preceded by an earlier revision of its minute with another value (a new id): the event is then a revision. */
  revise?: { rate: number };
  /** The first attempt's connection dropped mid-body: the platform retries it. */
  timeout?: { rate: number };
}

/** Attempts each kind hit; `down`: attempts refused inside a `webhook_down` window of the run's fault schedule (present only when one hit). */
export type FaultCounts = Record<FaultKind, number> & { down?: number };

/** Bounds of each parameter, one table: the scenario schema and `--webhook-faults` check the same ones. */
export const FAULT_BOUNDS = {
  rate: { min: 0, max: 1 },
  window: { min: 1, max: 256, fallback: 4 },
  delayMs: { min: 0, max: 60_000, fallbackMin: 50, fallbackMax: 500 },
  size: { min: 2, max: 1024, fallback: 8 },
  holdMs: { min: 1, max: 10_000, fallback: 500 },
} as const;

export function noFaults(): FaultCounts {
  return { duplicate: 0, reorder: 0, delay: 0, burst: 0, revise: 0, timeout: 0 };
}

/** A uniform draw in [0, 1) for (seed, subscription, event, what): the same in every run. */
export function draw(seed: number | string, subscriptionId: string, eventId: string, what: string): number {
  const h = createHash('sha256').update(`${seed}|${subscriptionId}|${eventId}|${what}`).digest();
  return h.readUInt32BE(0) / 2 ** 32;
}

/** Whether `fault` hits the event (rate 0: never; 1: always). */
export function hits(
  seed: number | string,
  subscriptionId: string,
  eventId: string,
  fault: FaultKind,
  rate: number,
): boolean {
  return rate > 0 && draw(seed, subscriptionId, eventId, fault) < rate;
}

/** The wall ms a delayed event waits: a uniform integer in [minMs, maxMs], drawn from its own hash. */
export function delayOf(
  seed: number | string,
  subscriptionId: string,
  eventId: string,
  d: { minMs: number; maxMs: number },
): number {
  return d.minMs + Math.floor(draw(seed, subscriptionId, eventId, 'delay-ms') * (d.maxMs - d.minMs + 1));
}

export type FaultsParse = { ok: true; faults: WebhookFaults } | { ok: false; col: number; message: string };

/**
 * `--webhook-faults duplicate=0.05,reorder=0.1/4,delay=0.1/50-500,burst=0.05/8/500,revise=0.2,timeout=0.01`:
 * `kind=rate`, then the kind's parameters after `/` (reorder: window; delay: min-max ms;
 * burst: size/hold ms); absent ones take their defaults. An error names its column (1-based).
 */
export function parseWebhookFaults(text: string): FaultsParse {
  const faults: WebhookFaults = {};
  let col = 1;
  for (const part of text.split(',')) {
    const fail = (message: string): FaultsParse => ({ ok: false, col, message });
    const m = /^\s*([a-z]+)\s*=\s*([^/]*)((?:\/[^/]*)*)\s*$/.exec(part);
    if (!m)
      return fail(`expected kind=rate[/parameters], one of ${FAULT_KINDS.join(', ')}, got ${JSON.stringify(part)}`);
    const kind = m[1] as string;
    if (!(FAULT_KINDS as readonly string[]).includes(kind))
      return fail(`unknown fault ${JSON.stringify(kind)}: one of ${FAULT_KINDS.join(', ')}`);
    if (kind in faults) return fail(`${kind} given twice`);
    const rate = Number(m[2]);
    if ((m[2] as string).trim() === '' || !(rate >= FAULT_BOUNDS.rate.min && rate <= FAULT_BOUNDS.rate.max))
      return fail(`${kind}: the rate must be a number in 0..1, got ${JSON.stringify(m[2])}`);
    const params = (m[3] as string).split('/').slice(1);
    const problem = setFault(faults, kind as FaultKind, rate, params);
    if (problem !== null) return fail(`${kind}: ${problem}`);
    col += part.length + 1;
  }
  return { ok: true, faults };
}

function intIn(text: string | undefined, lo: number, hi: number, fallback: number, what: string): number | string {
  if (text === undefined) return fallback;
  const n = Number(text);
  return Number.isInteger(n) && n >= lo && n <= hi && text.trim() !== ''
    ? n
    : `${what} must be an integer in ${lo}..${hi}, got ${JSON.stringify(text)}`;
}

function setFault(f: WebhookFaults, kind: FaultKind, rate: number, params: readonly string[]): string | null {
  const most = { duplicate: 0, revise: 0, timeout: 0, reorder: 1, delay: 1, burst: 2 }[kind];
  if (params.length > most)
    return `takes ${most === 0 ? 'no parameter' : `at most ${most} parameter${most > 1 ? 's' : ''}`} after the rate`;
  if (kind === 'duplicate' || kind === 'revise' || kind === 'timeout') {
    f[kind] = { rate };
    return null;
  }
  if (kind === 'reorder') {
    const w = intIn(
      params[0],
      FAULT_BOUNDS.window.min,
      FAULT_BOUNDS.window.max,
      FAULT_BOUNDS.window.fallback,
      'the window',
    );
    if (typeof w === 'string') return w;
    f.reorder = { rate, window: w };
    return null;
  }
  if (kind === 'delay') {
    const b = FAULT_BOUNDS.delayMs;
    const range = params[0] === undefined ? [String(b.fallbackMin), String(b.fallbackMax)] : params[0].split('-');
    if (range.length !== 2) return `the delay is min-max ms, e.g. 50-500, got ${JSON.stringify(params[0])}`;
    const lo = intIn(range[0], b.min, b.max, 0, 'the least delay (ms)');
    const hi = intIn(range[1], b.min, b.max, 0, 'the longest delay (ms)');
    if (typeof lo === 'string') return lo;
    if (typeof hi === 'string') return hi;
    if (lo > hi) return `the least delay ${lo} ms is above the longest ${hi} ms`;
    f.delay = { rate, minMs: lo, maxMs: hi };
    return null;
  }
  const size = intIn(
    params[0],
    FAULT_BOUNDS.size.min,
    FAULT_BOUNDS.size.max,
    FAULT_BOUNDS.size.fallback,
    'the burst size',
  );
  if (typeof size === 'string') return size;
  const hold = intIn(
    params[1],
    FAULT_BOUNDS.holdMs.min,
    FAULT_BOUNDS.holdMs.max,
    FAULT_BOUNDS.holdMs.fallback,
    'the hold (ms)',
  );
  if (typeof hold === 'string') return hold;
  f.burst = { rate, size, holdMs: hold };
  return null;
}
