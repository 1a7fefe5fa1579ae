import { round } from '../core/stats.js';
import type { PlatformReads } from '../platform/reads.js';

type EngineStats = NonNullable<Awaited<ReturnType<PlatformReads['webhookStats']>>>;

/**
 * Each endpoint's (subscription's) delivery figures (issue 29 item 3): the report's
 * `perf.webhooks`, the summary's lines and the thresholds that name an endpoint
 * (`webhooks[NAME].p99<200ms`) read them. Latency and throughput are wall figures (they vary
 * run to run, so they live in `perf`); the error rate is the deterministic counts' ratio, here
 * beside them so one block says how each endpoint fared.
 */
export interface EndpointFigures {
  id: string;
  name: string;
  delivered: number;
  /** Failed attempts (retried or dead-lettered) over all attempts, 0..1; null without an attempt. */
  errorRate: number | null;
  /** Enqueue → 2xx, wall ms. */
  latencyMs: { p50: number; p99: number };
  /** Deliveries per wall second, from its first attempt to its last 2xx. */
  deliveredPerWallS: number;
}

export function endpointFigures(stats: EngineStats): EndpointFigures[] {
  return stats.subscriptions.map((s) => {
    const e = stats.endpoints.find((x) => x.id === s.id);
    const attempts = s.delivered + s.retried + s.deadLettered;
    return {
      id: s.id,
      name: s.name,
      delivered: s.delivered,
      errorRate: attempts === 0 ? null : round((s.retried + s.deadLettered) / attempts, 6),
      latencyMs: { p50: round(e?.latencyP50Ms ?? 0, 2), p99: round(e?.latencyP99Ms ?? 0, 2) },
      deliveredPerWallS: Math.round(e?.deliveredPerWallS ?? 0),
    };
  });
}
