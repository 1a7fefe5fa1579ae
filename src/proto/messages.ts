/**
 * Domain form of the wire messages in proto/occusim/v1/uplink.proto. On the wire a sensor
 * is named by its MAC address; the cloud maps it to a sensor through the asset registry.
 */
export interface WireDetectionPacket {
  readonly kind: 'presence';
  readonly sensorMac: string;
  readonly sensedAtMs: number;
  readonly detections: ReadonlyArray<readonly [number, number]>;
}

export interface WireTrafficPacket {
  readonly kind: 'traffic';
  readonly sensorMac: string;
  readonly sensedAtMs: number;
  readonly intervalMs: number;
  readonly in: number;
  readonly out: number;
}

export type WirePacket = WireDetectionPacket | WireTrafficPacket;

export interface UplinkBatch {
  readonly hiveSerial: string;
  readonly seq: number;
  readonly sentAtMs: number;
  readonly packets: readonly WirePacket[];
}

export interface UplinkAck {
  readonly hiveSerial: string;
  readonly ackedSeq: number;
  readonly ackedAtMs: number;
}
