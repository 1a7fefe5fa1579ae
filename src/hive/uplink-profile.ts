import type { Rng } from '../core/rng.js';
import type { Backhaul } from '../scenario/model.js';

/**
 * Backhaul profiles of a hive (platform-reference §6: Wi-Fi, cellular or Ethernet): one-way
 * latency as a log-normal distribution, bandwidth, and random outages (Poisson arrivals,
 * exponential lengths). Scenario faults add outages on top.
 */
export interface UplinkProfile {
  readonly latencyMedianMs: number;
  /** Log-normal shape: the p99 is about median × e^(2.33 σ). */
  readonly latencySigma: number;
  readonly bandwidthBytesPerS: number;
  /** Mean random outages per day (0 = none). */
  readonly outagesPerDay: number;
  readonly outageMeanMs: number;
}

export const UPLINK_PROFILES: Record<Backhaul, UplinkProfile> = {
  ethernet: {
    latencyMedianMs: 4,
    latencySigma: 0.3,
    bandwidthBytesPerS: 10_000_000,
    outagesPerDay: 0,
    outageMeanMs: 0,
  },
  wifi: { latencyMedianMs: 18, latencySigma: 0.6, bandwidthBytesPerS: 2_000_000, outagesPerDay: 0, outageMeanMs: 0 },
  cellular: {
    latencyMedianMs: 90,
    latencySigma: 0.8,
    bandwidthBytesPerS: 60_000,
    outagesPerDay: 2,
    outageMeanMs: 90_000,
  },
};

export function sampleLatencyMs(p: UplinkProfile, rng: Rng): number {
  return Math.round(p.latencyMedianMs * Math.exp(p.latencySigma * rng.normal(0, 1)));
}

/** Random outage windows of one hive over [startMs, endMs), drawn once from its own stream. */
export function randomOutages(
  p: UplinkProfile,
  rng: Rng,
  startMs: number,
  endMs: number,
): Array<{ from: number; to: number }> {
  const out: Array<{ from: number; to: number }> = [];
  if (p.outagesPerDay <= 0) return out;
  const meanGap = 86_400_000 / p.outagesPerDay;
  for (let t = startMs + rng.exponential(meanGap); t < endMs;) {
    const len = Math.max(1000, Math.round(rng.exponential(p.outageMeanMs)));
    out.push({ from: Math.round(t), to: Math.round(t) + len });
    t += len + rng.exponential(meanGap);
  }
  return out;
}
