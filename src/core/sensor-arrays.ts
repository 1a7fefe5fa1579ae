/**
 * The thermopile arrays the platform supports (platform-reference §6): shared by the scenario
 * format, the simulated sensors and the platform's asset catalogue, so it lives in the core.
 */
export const SENSOR_ARRAYS = {
  'tp-8x8': { cols: 8, rows: 8 },
  'tp-16x12': { cols: 16, rows: 12 },
  'tp-32x24': { cols: 32, rows: 24 },
  'tp-32x32': { cols: 32, rows: 32 },
} as const;
export type SensorArrayName = keyof typeof SENSOR_ARRAYS;
