/**
 * Every error the project raises carries a stable code, mapped once at each edge
 * (CLI exit code, HTTP status, dead-letter reason).
 */
export const ErrorCodes = {
  USAGE: 'USAGE',
  SCENARIO_NOT_FOUND: 'SCENARIO_NOT_FOUND',
  SCENARIO_INVALID: 'SCENARIO_INVALID',
  NOT_IMPLEMENTED: 'NOT_IMPLEMENTED',
  BROKER_FAILED: 'BROKER_FAILED',
  CLOUD_FAILED: 'CLOUD_FAILED',
  STORE_FAILED: 'STORE_FAILED',
  DECODE_FAILED: 'DECODE_FAILED',
  UNKNOWN_HIVE: 'UNKNOWN_HIVE',
  UNKNOWN_SENSOR: 'UNKNOWN_SENSOR',
  SENSOR_NOT_ON_HIVE: 'SENSOR_NOT_ON_HIVE',
  SENSOR_MODE_MISMATCH: 'SENSOR_MODE_MISMATCH',
  BAD_TOPIC: 'BAD_TOPIC',
  /** A packet for a finalised minute beyond its hive's budget of minutes to reopen (cloud/late-admission.ts). */
  LATE_BEYOND_BUDGET: 'LATE_BEYOND_BUDGET',
  TIMEOUT: 'TIMEOUT',
  /** A write of an ingest process whose partition lease another process took (fencing, docs/scale-out.md). */
  LEASE_LOST: 'LEASE_LOST',
  CAPTURE_INVALID: 'CAPTURE_INVALID',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
  }
}

export function isAppError(err: unknown, code?: ErrorCode): err is AppError {
  return err instanceof AppError && (code === undefined || err.code === code);
}
