import { closest } from './diagnostics.js';

/**
 * Thresholds on a run's report, k6-style: `rooms.mae<0.5`, `latency.p99<15s`,
 * `messages.lost==0`. Written in a scenario's `expect:` list or given as `occusim run
 * --expect`; evaluated against the report when the run ends (src/run/expectations.ts).
 * The grammar and the metric names live here so a scenario file is checked when it loads.
 */

/** How a metric's value is written and printed. */
export type MetricUnit = 'count' | 'people' | 'ratio' | 'duration' | 'rate';

/** Every metric a threshold may name, with its unit and what it measures (docs/cli.md lists them). */
export const EXPECT_METRICS = {
  'rooms.mae': { unit: 'people', what: 'presence: mean absolute error per room-minute' },
  'rooms.exact': { unit: 'ratio', what: 'presence: share of room-minutes measured exactly' },
  'rooms.within1': { unit: 'ratio', what: 'presence: share of room-minutes within one person' },
  'traffic.recall': { unit: 'ratio', what: 'traffic: counted share of true door crossings' },
  'traffic.mae_raw': { unit: 'people', what: 'traffic occupancy (raw): mean absolute error, mean over spaces' },
  'traffic.mae_calibrated': {
    unit: 'people',
    what: 'traffic occupancy (calibrated): mean absolute error, mean over spaces',
  },
  'latency.p50': { unit: 'duration', what: 'sensing → stored latency, median (simulated time)' },
  'latency.p90': { unit: 'duration', what: 'sensing → stored latency, 90th percentile' },
  'latency.p99': { unit: 'duration', what: 'sensing → stored latency, 99th percentile' },
  'latency.max': { unit: 'duration', what: 'sensing → stored latency, maximum' },
  'messages.lost': { unit: 'count', what: 'packets sent but neither stored nor dead-lettered' },
  'messages.duplicates': { unit: 'count', what: 'uplink batches received more than once' },
  'messages.delivered': { unit: 'count', what: 'packets stored by the cloud' },
  deadletters: { unit: 'count', what: 'packets the cloud dead-lettered' },
  'pipeline.late_beyond_window': { unit: 'count', what: 'packets later than the recompute window' },
  'delivery.mesh_ratio': { unit: 'ratio', what: 'mesh frames delivered after retries' },
  'webhooks.delivered': { unit: 'count', what: 'webhook deliveries acknowledged by their endpoint' },
  'webhooks.deadletters': { unit: 'count', what: 'webhook deliveries given up (dead letters)' },
  'webhooks.lost': { unit: 'count', what: 'webhook deliveries dead-lettered or still pending at the end' },
  'webhooks.errors': {
    unit: 'ratio',
    what: 'share of webhook attempts that failed (retried or dead-lettered), every endpoint',
  },
  'webhooks.p50': { unit: 'duration', what: 'webhook enqueue → 2xx latency, median (wall time: varies run to run)' },
  'webhooks.p99': {
    unit: 'duration',
    what: 'webhook enqueue → 2xx latency, 99th percentile (wall time: varies run to run)',
  },
  'webhooks.throughput': {
    unit: 'rate',
    what: 'webhook deliveries per wall second, from the first attempt to the last 2xx (every endpoint: their sum)',
  },
  'detector.presence.exact': { unit: 'ratio', what: 'sensors\u2019 own presence counts exact (frame fidelity)' },
  'detector.traffic.precision': { unit: 'ratio', what: 'sensors\u2019 own crossing precision (frame fidelity)' },
  'detector.traffic.recall': { unit: 'ratio', what: 'sensors\u2019 own crossing recall (frame fidelity)' },
} as const satisfies Record<string, { unit: MetricUnit; what: string }>;

export type ExpectMetric = keyof typeof EXPECT_METRICS;
export const EXPECT_OPERATORS = ['<=', '>=', '==', '!=', '<', '>'] as const;
export type ExpectOperator = (typeof EXPECT_OPERATORS)[number];

export interface Expectation {
  /** As written (trimmed): the threshold's name in tables and JUnit. */
  text: string;
  metric: ExpectMetric;
  op: ExpectOperator;
  /** In the metric's base unit: ms for durations, 0..1 for ratios. */
  value: number;
  /** `webhooks[NAME].…`: the one endpoint (subscription, by name) the metric is read for; absent: every endpoint. */
  endpoint?: string;
}

export type ExpectationParse = { ok: true; expectation: Expectation } | { ok: false; message: string };

/** Thresholds per run at most (each is one line of a table and one JUnit test case). */
export const MAX_EXPECTATIONS = 100;
const MAX_TEXT = 200;

const SHAPE = /^\s*([a-z][a-z0-9_.]*)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*(ms|s|m|h|%)?\s*$/;
/** `webhooks[NAME].metric…`: a webhook metric of one endpoint, named as the subscription is (no `]` in the name). */
const ENDPOINT = /^(\s*webhooks)\[([^\]]{1,100})\](\..*)$/s;
const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses one threshold; the message of a failure says what was expected and where it went wrong. */
export function parseExpectation(text: string): ExpectationParse {
  if (text.length > MAX_TEXT) return { ok: false, message: `a threshold is at most ${MAX_TEXT} characters` };
  const named = ENDPOINT.exec(text);
  if (named) {
    const [, head = '', endpoint = '', tail = ''] = named;
    const inner = parseExpectation(`${head}${tail}`);
    if (!inner.ok) return inner;
    return { ok: true, expectation: { ...inner.expectation, text: text.trim(), endpoint } };
  }
  const m = SHAPE.exec(text);
  if (!m)
    return {
      ok: false,
      message: `bad threshold ${JSON.stringify(text)}: write METRIC OP VALUE, e.g. rooms.mae<0.5, latency.p99<15s, messages.lost==0`,
    };
  const [, name = '', op = '', number = '', unitText] = m;
  if (!isMetric(name)) {
    const hint = closest(name, Object.keys(EXPECT_METRICS));
    return {
      ok: false,
      message: `unknown metric \`${name}\`${hint === null ? '' : `; did you mean \`${hint}\`?`} (metrics: ${Object.keys(EXPECT_METRICS).join(', ')})`,
    };
  }
  const unit = EXPECT_METRICS[name].unit;
  const value = valueIn(unit, Number(number), unitText);
  if (typeof value === 'string') return { ok: false, message: `${name}: ${value}` };
  return { ok: true, expectation: { text: text.trim(), metric: name, op: op as ExpectOperator, value } };
}

function valueIn(unit: MetricUnit, n: number, suffix: string | undefined): number | string {
  if (unit === 'duration') {
    if (suffix === '%') return 'a duration takes ms, s, m or h (a bare number is ms)';
    return n * (DURATION_UNITS[suffix ?? 'ms'] ?? 1);
  }
  if (unit === 'ratio') {
    if (suffix === '%') return n / 100;
    if (suffix !== undefined) return `a ratio is written 0.9 or 90%, not with ${suffix}`;
    if (n < 0 || n > 1) return `a ratio lies in 0..1 (or write ${n}%)`;
    return n;
  }
  if (suffix !== undefined)
    return `a ${{ count: 'count', people: 'number of people', rate: 'rate (per second)' }[unit]} takes no unit (${suffix})`;
  return n;
}

function isMetric(name: string): name is ExpectMetric {
  return Object.hasOwn(EXPECT_METRICS, name);
}

/** Whether `measured OP threshold` holds. */
export function holds(op: ExpectOperator, measured: number, threshold: number): boolean {
  switch (op) {
    case '<':
      return measured < threshold;
    case '<=':
      return measured <= threshold;
    case '>':
      return measured > threshold;
    case '>=':
      return measured >= threshold;
    case '==':
      return measured === threshold;
    case '!=':
      return measured !== threshold;
  }
}
