import type { ErrorCode } from '../core/errors.js';

/**
 * The shapes of what the store keeps, as its port reads and writes them. They belong to the
 * store (the cloud computes them, the API and webhooks read them), so every part that needs
 * one imports it from here rather than from the module that happens to compute it.
 */

/** One space's occupancy minute: the value and how many samples made it. */
export interface PresenceMinuteRow {
  spaceId: string;
  minuteMs: number;
  value: number;
  samples: number;
}

/** One sensor's door-line counts for a minute. */
export interface TrafficMinuteRow {
  sensorId: string;
  minuteMs: number;
  in: number;
  out: number;
}

/** A message or packet that was not processed, with the reason (listed by `occusim deadletters`). */
export interface DeadLetter {
  receivedAtMs: number;
  topic: string;
  reason: ErrorCode;
  message: string;
  /** The whole message for a rejected batch; the packet as JSON for a rejected packet. */
  payload: Uint8Array;
}

/**
 * Multi-resolution buckets of spec §4.4 (`window.every`: 1m, 5m, 15m, 30m, 1h, 1d), each kept
 * as its own series in the store.
 */
export const ROLLUP_LEVELS = ['5m', '15m', '30m', '1h', '1d'] as const;
export type RollupLevel = (typeof ROLLUP_LEVELS)[number];
export type Interval = '1m' | RollupLevel;
