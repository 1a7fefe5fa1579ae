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
  /** Sender's minor protocol version (since v1.1); absent means 0. */
  readonly protocolMinor?: number;
}

export interface UplinkAck {
  readonly hiveSerial: string;
  readonly ackedSeq: number;
  readonly ackedAtMs: number;
}

/** SensorHealth (since v1.1): what a sensor reports about itself over the mesh. */
export interface SensorHealth {
  readonly sensorMac: string;
  readonly measuredAtMs: number;
  /** 0..1 */
  readonly batteryLevel: number;
  readonly batteryRuntimeS: number;
  readonly rssiDbm: number;
  /** 0..1 */
  readonly linkPdr: number;
  readonly uptimeMs: number;
  /** Preferred parent: a sensor MAC or the hive serial. */
  readonly parent: string;
  readonly hops: number;
  readonly queueOverflows: number;
}

/** MeshFrame (since v1.1): one sensor → hive frame over the TSCH mesh. */
export interface MeshFrame {
  readonly meshSeq: number;
  readonly hops: number;
  readonly payload:
    { readonly kind: 'data'; readonly packet: WirePacket } | { readonly kind: 'health'; readonly health: SensorHealth };
}

export type HiveState = 'online' | 'streaming' | 'catching_up' | 'booting';

/** HiveHeartbeat (since v1.1): hive status, every heartbeat interval while the uplink is up. */
export interface HiveHeartbeat {
  readonly hiveSerial: string;
  readonly sentAtMs: number;
  readonly firmwareVersion: string;
  readonly protocolMinor: number;
  readonly state: HiveState;
  readonly uptimeMs: number;
  /** 0..1 */
  readonly netPathStability: number;
  readonly ackedSeq: number;
  readonly nextSeq: number;
  readonly bufferedBatches: number;
  readonly bufferedBytes: number;
  readonly droppedPackets: number;
  readonly sensors: readonly SensorHealth[];
}
