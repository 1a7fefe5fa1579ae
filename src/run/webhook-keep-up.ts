import { round } from '../core/stats.js';
import type { PlatformReads } from '../platform/reads.js';
import { deliveryLimit, type DeliveryLimit } from './delivery-limit.js';

/** The delivery engine's figures, as the platform's reads give them (webhooks/engine.ts `EngineStats`). */
type EngineStats = NonNullable<Awaited<ReturnType<PlatformReads['webhookStats']>>>;

/**
 * Whether webhook delivery kept up with real time (issue 12, fleet scale): what the platform
 * produced per simulated second against what it delivered, the backlog left at the end, and the
 * delivery capacity measured while delivering (deliveries per wall second of delivery work)
 * against the rate real time would need. Wall figures: they belong in the report's `perf`.
 *
 * - at `--speed max` real time needs `producedPerSimS` deliveries per wall second: delivery
 *   keeps up when nothing is left pending and the capacity reaches that. The capacity is a lower
 *   bound (a round of few deliveries waits for its round trip, not for the CPU);
 * - at `--speed F` every tick's deliveries are sent before the loop moves on (`advance`), so
 *   delivery falling behind shows as the loop's lag (`perf.realTime`) and as the enqueue → 2xx
 *   latency: it keeps up when nothing is left pending and that latency's p99 stays within the
 *   loop's "behind" threshold (2 s). Sensing → delivered is given in wall ms as the simulated
 *   age at the 2xx divided by F plus the enqueue → 2xx wall latency (per percentile: an upper
 *   bound of the percentile of the sum).
 */
export interface WebhookKeepUp {
  /** Deliveries enqueued (one per subscription and event) and delivered, per simulated second. */
  producedPerSimS: number;
  deliveredPerSimS: number;
  enqueued: number;
  delivered: number;
  /** Pending deliveries at the end of the run. */
  backlog: number;
  /** Deliveries per wall second of delivery work. */
  capacityPerWallS: number;
  /** Capacity over the rate real time needs at this speed (a lower bound: see above). */
  headroom: number;
  keptUp: boolean;
  /** `--speed F` of a paced run, null at `--speed max`. */
  speed: number | null;
  /** Wall ms from enqueue to the 2xx, p99 (what a paced run's verdict reads). */
  enqueueToDeliveredP99Ms: number;
  /** Simulated ms from sensing to the 2xx (the pipeline's batching and the delivery round): p50 / p99 / max. */
  sensingToDeliveredSimMs: { p50: number; p99: number; max: number };
  /** Paced runs: wall ms from sensing to the 2xx, upper bounds per percentile. */
  sensingToDeliveredWallMs?: { p50: number; p99: number };
  /** What limits delivery (run/delivery-limit.ts): the summary states it when delivery did not keep up. */
  limit?: DeliveryLimit;
}

/** As the loop's lag monitor (run/lag.ts): beyond this a paced run no longer delivers "live" data. */
const PACED_BEHIND_MS = 2_000;

export function webhookKeepUp(stats: EngineStats, simulatedMs: number, speed: number | 'max'): WebhookKeepUp {
  const delivered = stats.subscriptions.reduce((a, s) => a + s.delivered, 0);
  const backlog = stats.subscriptions.reduce((a, s) => a + s.pending, 0);
  const simS = Math.max(1, simulatedMs) / 1000;
  const producedPerSimS = stats.keepUp.enqueued / simS;
  const capacityPerWallS = stats.keepUp.busyWallMs > 0 ? delivered / (stats.keepUp.busyWallMs / 1000) : 0;
  const need = producedPerSimS * (speed === 'max' ? 1 : speed);
  // Nothing produced: nothing to keep up with.
  const headroom = need > 0 ? capacityPerWallS / need : Infinity;
  const age = stats.keepUp.sensingToDeliveredSimMs;
  const load = stats.keepUp.load;
  const limit = deliveryLimit({
    busyWallMs: stats.keepUp.busyWallMs,
    loopActiveMs: load.loopActiveMs,
    storeMs: load.storeMs,
    delivered,
    responseP50Ms: load.responseP50Ms,
    responseP99Ms: load.responseP99Ms,
    inFlight: load.inFlight,
  });
  return {
    producedPerSimS: round(producedPerSimS, 2),
    deliveredPerSimS: round(delivered / simS, 2),
    enqueued: stats.keepUp.enqueued,
    delivered,
    backlog,
    capacityPerWallS: Math.round(capacityPerWallS),
    headroom: Number.isFinite(headroom) ? round(headroom, 1) : 0,
    keptUp: backlog === 0 && (speed === 'max' ? headroom >= 1 : stats.latencyP99Ms <= PACED_BEHIND_MS),
    speed: speed === 'max' ? null : speed,
    enqueueToDeliveredP99Ms: round(stats.latencyP99Ms, 1),
    sensingToDeliveredSimMs: { p50: age.p50, p99: age.p99, max: age.max },
    ...(speed === 'max'
      ? {}
      : {
          sensingToDeliveredWallMs: {
            p50: round(age.p50 / speed + stats.latencyP50Ms, 1),
            p99: round(age.p99 / speed + stats.latencyP99Ms, 1),
          },
        }),
    ...(limit ? { limit } : {}),
  };
}

/** The summary's line. */
export function formatKeepUp(k: WebhookKeepUp): string {
  const capacity = `capacity ≥ ${k.capacityPerWallS.toLocaleString('en-US')}/wall-s, ×${k.headroom} the need`;
  const verdict =
    k.speed === null
      ? `${k.keptUp ? 'kept up with' : 'did NOT keep up with'} real time (${capacity}, backlog ${k.backlog})`
      : `${k.keptUp ? 'kept up with' : 'did NOT keep up with'} real time ×${k.speed} (backlog ${k.backlog}, enqueue → 2xx p99 ${k.enqueueToDeliveredP99Ms} ms of ≤ ${PACED_BEHIND_MS} ms; ${capacity})`;
  const wall = k.sensingToDeliveredWallMs
    ? `; wall ≤ p50 ${k.sensingToDeliveredWallMs.p50} ms, p99 ${k.sensingToDeliveredWallMs.p99} ms`
    : '';
  // Not keeping up: what limits it, measured (issue 29 item 4).
  const limit = !k.keptUp && k.limit ? `\n  ${k.limit.statement}` : '';
  return (
    `  delivery ${verdict}; produced ${k.producedPerSimS}/sim-s, delivered ${k.deliveredPerSimS}/sim-s; ` +
    `sensing → delivered (sim) p50 ${k.sensingToDeliveredSimMs.p50} ms, p99 ${k.sensingToDeliveredSimMs.p99} ms, max ${k.sensingToDeliveredSimMs.max} ms${wall}${limit}`
  );
}
