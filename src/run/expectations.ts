import { EXPECT_METRICS, holds, type ExpectMetric, type Expectation } from '../scenario/expectations.js';
import type { RunResult } from './report.js';
import type { EndpointFigures } from './webhook-endpoints.js';

/**
 * Thresholds evaluated against a finished run's result: pure, so the CLI prints the table,
 * writes JUnit and picks the exit code from the same verdicts. A metric the run did not
 * measure (no webhooks, the detector at model fidelity) fails its threshold: a CI gate must
 * not pass by measuring nothing.
 */
export interface Verdict {
  expectation: Expectation;
  /** The measured value in the metric's base unit, or null when the run did not measure it. */
  measured: number | null;
  passed: boolean;
}

/** What thresholds read besides the result: wall-time figures of the run (`perf`), which vary run to run. */
export interface MeasuredPerf {
  webhookLatencyMs?: { p50: number; p99: number };
  /** Per endpoint (run/webhook-endpoints.ts): what `webhooks[NAME].…` thresholds read. */
  webhookEndpoints?: readonly EndpointFigures[];
}

/** Where each metric is read in the result (complete by type: a new metric needs its reader). */
const READERS: Readonly<Record<ExpectMetric, (r: RunResult, p: MeasuredPerf) => number | null>> = {
  'rooms.mae': (r) => (r.presence.rooms.minutes > 0 ? r.presence.rooms.mae : null),
  'rooms.exact': (r) => (r.presence.rooms.minutes > 0 ? r.presence.rooms.exactRate : null),
  'rooms.within1': (r) => (r.presence.rooms.minutes > 0 ? r.presence.rooms.withinOneRate : null),
  'traffic.recall': (r) => (r.traffic.sensors.length > 0 ? r.traffic.overall.recall : null),
  'traffic.mae_raw': (r) => meanOverSpaces(r, (s) => s.maeRaw),
  'traffic.mae_calibrated': (r) => meanOverSpaces(r, (s) => s.maeCalibrated),
  'latency.p50': (r) => r.latencyMs.p50,
  'latency.p90': (r) => r.latencyMs.p90,
  'latency.p99': (r) => r.latencyMs.p99,
  'latency.max': (r) => r.latencyMs.max,
  'messages.lost': (r) => r.messages.lost,
  'messages.duplicates': (r) => r.messages.duplicateBatches,
  'messages.delivered': (r) => r.messages.packetsDelivered,
  deadletters: (r) => r.messages.deadLettered,
  'pipeline.late_beyond_window': (r) => r.pipeline.lateBeyondWindow,
  'delivery.mesh_ratio': (r) => r.delivery?.overall.meshDeliveryRatio ?? null,
  'webhooks.delivered': (r) => sumWebhooks(r, (w) => w.delivered),
  'webhooks.deadletters': (r) => sumWebhooks(r, (w) => w.deadLettered),
  'webhooks.lost': (r) => sumWebhooks(r, (w) => w.deadLettered + w.pending),
  'webhooks.errors': (r) => webhookErrorRate(r),
  'webhooks.p50': (_, p) => p.webhookLatencyMs?.p50 ?? null,
  'webhooks.p99': (_, p) => p.webhookLatencyMs?.p99 ?? null,
  'webhooks.throughput': (_, p) =>
    p.webhookEndpoints === undefined ? null : p.webhookEndpoints.reduce((a, e) => a + e.deliveredPerWallS, 0),
  'detector.presence.exact': (r) => r.detector?.presence.overall.exactRate ?? null,
  'detector.traffic.precision': (r) => r.detector?.traffic.overall.precision ?? null,
  'detector.traffic.recall': (r) => r.detector?.traffic.overall.recall ?? null,
};

/** The mean over traffic spaces, as the summary prints it. */
function meanOverSpaces(
  r: RunResult,
  f: (s: RunResult['trafficOccupancy']['spaces'][number]) => number,
): number | null {
  const spaces = r.trafficOccupancy.spaces;
  return spaces.length === 0 ? null : Math.round((spaces.reduce((a, s) => a + f(s), 0) / spaces.length) * 100) / 100;
}

type WebhookCounts = NonNullable<RunResult['webhooks']>[number];

function sumWebhooks(r: Pick<RunResult, 'webhooks'>, f: (w: WebhookCounts) => number): number | null {
  return r.webhooks === undefined ? null : r.webhooks.reduce((a, w) => a + f(w), 0);
}

/** Failed attempts (retried or dead-lettered) over all attempts, every subscription; null without an attempt. */
export function webhookErrorRate(r: Pick<RunResult, 'webhooks'>): number | null {
  const failed = sumWebhooks(r, (w) => w.retried + w.deadLettered);
  const attempts = sumWebhooks(r, (w) => w.delivered + w.retried + w.deadLettered);
  return failed === null || attempts === null || attempts === 0 ? null : failed / attempts;
}

export function evaluateExpectations(
  expectations: readonly Expectation[],
  result: RunResult,
  perf: MeasuredPerf = {},
): Verdict[] {
  return expectations.map((expectation) => {
    const measured =
      expectation.endpoint === undefined
        ? READERS[expectation.metric](result, perf)
        : ofEndpoint(expectation.metric, expectation.endpoint, result, perf);
    return { expectation, measured, passed: measured !== null && holds(expectation.op, measured, expectation.value) };
  });
}

/** A value in its metric's unit as a reader expects it: `0.43`, `97.2%`, `10.0 s`, `0`. */
export function formatMetricValue(metric: ExpectMetric, value: number | null): string {
  if (value === null) return 'not measured';
  switch (EXPECT_METRICS[metric].unit) {
    case 'duration':
      return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${value} ms`;
    case 'ratio':
      return `${(value * 100).toFixed(1)}%`;
    case 'people':
      return String(Math.round(value * 1000) / 1000);
    case 'count':
      return String(value);
    case 'rate':
      return `${value}/s`;
  }
}

/**
 * A `webhooks.*` metric of one endpoint (`webhooks[NAME].…`, by subscription name): the same
 * reader over that subscription alone, and its own latency and throughput. An endpoint the run
 * did not have is not measured (the threshold fails, naming nothing passed).
 */
function ofEndpoint(metric: ExpectMetric, name: string, r: RunResult, p: MeasuredPerf): number | null {
  const mine = r.webhooks?.filter((w) => w.name === name) ?? [];
  const figures = p.webhookEndpoints?.find((e) => e.name === name);
  if (mine.length === 0) return null;
  const one: RunResult = { ...r, webhooks: mine };
  const perf: MeasuredPerf = figures ? { webhookLatencyMs: figures.latencyMs, webhookEndpoints: [figures] } : {};
  return READERS[metric](one, perf);
}
