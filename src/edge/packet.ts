/**
 * Sensor → hive packets in domain form (the wire form is proto/occusim/v1; the codec maps
 * between them). Sensor-local coordinates are normalised [x, y] across the footprint.
 */
export interface PresencePacket {
  readonly kind: 'presence';
  readonly sensorId: string;
  /** Sensing instant, epoch ms. */
  readonly sensedAtMs: number;
  readonly detections: ReadonlyArray<readonly [number, number]>;
}

export interface TrafficPacket {
  readonly kind: 'traffic';
  readonly sensorId: string;
  /** End of the counting interval, epoch ms. */
  readonly sensedAtMs: number;
  readonly intervalMs: number;
  readonly in: number;
  readonly out: number;
}

export type SensorPacket = PresencePacket | TrafficPacket;
