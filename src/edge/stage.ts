import type { World, WorldStep } from '../sim/types.js';
import type { DetectorAccuracy } from './accuracy-types.js';
import type { EdgePackets } from './edge-packets.js';

/**
 * The edge stage as the run loop sees it: it observes the world once per tick (synchronously,
 * while the world is at that tick) and, once per batch interval, hands over the packets its
 * sensors produced. `drain` is async so the work can run in worker threads over many ticks
 * at once; its result must not depend on how the work was split.
 */
export interface EdgeStage {
  observe(step: WorldStep, world: World): void;
  /** Packets produced since the last drain, ordered by (sensedAtMs, sensor order), in the flat form (edge-packets.ts). */
  drain(): Promise<EdgePackets>;
  close(): Promise<void>;
  /** Detection accuracy of the sensors against ground truth, so far (docs/edge.md). */
  accuracy?(): DetectorAccuracy;
}
