/**
 * Presence occupancy's shared constant and row (definitions in docs/occupancy.md). The live
 * path is `kernel/presence-kernel.ts`; the reference definition it must agree with lives
 * with the tests (test/oracles/presence-reference.ts, judged in test/cloud/kernel.test.ts).
 */

/** Two detections from different sensors closer than this are one person. */
export const MERGE_RADIUS_M = 0.5;
