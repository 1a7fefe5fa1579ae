/**
 * Protocol v1 constants and limits (docs/protocol.md §Limits). Firmware and the simulator
 * read the same numbers.
 */
export const PROTOCOL_PACKAGE = 'occusim.v1';
/** Minor version this build speaks (adds MeshFrame, SensorHealth, HiveHeartbeat, protocol_minor). */
export const PROTOCOL_MINOR = 1;
/** Most packets in one HiveUplink. */
export const MAX_PACKETS_PER_BATCH = 500;
/** Largest MQTT payload a broker accepts (uplink, heartbeat). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/** Largest heartbeat payload. */
export const MAX_HEARTBEAT_BYTES = 64 * 1024;
/** Tolerated clock skew between a sensor's sensing time and its hive's send time. */
export const CLOCK_SKEW_TOLERANCE_MS = 2_000;
/** Default heartbeat period. */
export const HEARTBEAT_INTERVAL_MS = 60_000;
