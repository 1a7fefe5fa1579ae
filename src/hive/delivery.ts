import type { EdgePackets } from '../edge/edge-packets.js';
import type { SensorPacket } from '../edge/packet.js';
import type { WirePacket } from '../proto/messages.js';

/**
 * Everything between a sensor and the cloud, as the run loop sees it: packets leave their
 * sensors (`submit`), and at every batch interval the hives publish what has reached them
 * and the loop waits for the cloud's acknowledgements (`flush`), so at `--speed max` the
 * simulator never outruns the cloud.
 */
export interface DeliveryStage {
  /**
   * Packets for the next flush. May be called while the previous flush still waits for acks:
   * they enter the meshes after that flush has taken what arrived (never before), so the
   * result does not depend on when they were handed over. The edge's flat form
   * (edge-packets.ts: sensor indices into the run's `model.sensors`). Ownership passes to the
   * stage: the caller must not read or reuse the buffer after this call. The stage calls
   * `packets.release` once nothing of it reads the buffer again — at once when the hive threads'
   * hand-off has copied it, or once the last packet has left the in-thread meshes — and the
   * edge's writer fills it again (an interval's buffer is tens of MB at 100,000 sensors).
   */
  submit(packets: EdgePackets): void;
  /** Hives publish what they hold at `atMs`; resolves once the cloud acknowledged it. Returns the batches published. */
  flush(atMs: number): Promise<number>;
  stats(): DeliveryStats;
}

export interface DeliveryStats {
  packetsSubmitted: number;
  batchesPublished: number;
}

/** A sensor's packet as the wire carries it: the sensor named by its MAC. */
export function toWire(p: SensorPacket, mac: string): WirePacket {
  if (p.kind === 'presence')
    return { kind: 'presence', sensorMac: mac, sensedAtMs: p.sensedAtMs, detections: p.detections };
  return { kind: 'traffic', sensorMac: mac, sensedAtMs: p.sensedAtMs, intervalMs: p.intervalMs, in: p.in, out: p.out };
}
