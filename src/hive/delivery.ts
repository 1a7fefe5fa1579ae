import type { SensorPacket } from '../edge/packet.js';
import type { WirePacket } from '../proto/messages.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { HiveBatcher } from './batcher.js';
import type { HiveLink } from './mqtt-hive.js';

/**
 * Everything between a sensor and the cloud, as the run loop sees it: packets leave their
 * sensors (`submit`), and at every batch interval the hives publish what has reached them
 * and the loop waits for the cloud's acknowledgements (`flush`), so at `--speed max` the
 * simulator never outruns the cloud.
 */
export interface DeliveryStage {
  submit(packets: readonly SensorPacket[]): void;
  /** Hives publish what they hold at `atMs`; resolves once the cloud acknowledged it. Returns the batches published. */
  flush(atMs: number): Promise<number>;
  stats(): DeliveryStats;
}

export interface DeliveryStats {
  packetsSubmitted: number;
  batchesPublished: number;
}

/** One hive as the delivery stage drives it. */
export interface HiveEndpoint {
  readonly serial: string;
  readonly batcher: HiveBatcher;
  readonly link: HiveLink;
}

interface Route {
  mac: string;
  hive: HiveEndpoint;
}

/**
 * Direct delivery: every packet reaches its hive at once, without a mesh. Hives publish in
 * parallel, each its batches in sequence order.
 */
export function createDirectDelivery(model: ScenarioModel, hives: ReadonlyMap<string, HiveEndpoint>): DeliveryStage {
  const routes = new Map<string, Route>();
  for (const s of model.sensors) {
    const hive = hives.get(s.hiveId);
    if (hive) routes.set(s.id, { mac: s.mac, hive });
  }
  const stats: DeliveryStats = { packetsSubmitted: 0, batchesPublished: 0 };
  return {
    submit(packets) {
      for (const p of packets) {
        const route = routes.get(p.sensorId);
        if (!route) throw new Error(`no hive route for sensor ${p.sensorId}`);
        route.hive.batcher.enqueue(toWire(p, route.mac));
        stats.packetsSubmitted++;
      }
    },
    async flush(atMs) {
      const counts = await Promise.all(
        [...hives.values()].map(async (hive) => {
          const batches = hive.batcher.takeBatches(atMs);
          for (const b of batches) await hive.link.publish(b);
          return batches.length;
        }),
      );
      const n = counts.reduce((a, b) => a + b, 0);
      stats.batchesPublished += n;
      return n;
    },
    stats: () => ({ ...stats }),
  };
}

export function toWire(p: SensorPacket, mac: string): WirePacket {
  if (p.kind === 'presence') return { kind: 'presence', sensorMac: mac, sensedAtMs: p.sensedAtMs, detections: p.detections };
  return { kind: 'traffic', sensorMac: mac, sensedAtMs: p.sensedAtMs, intervalMs: p.intervalMs, in: p.in, out: p.out };
}
