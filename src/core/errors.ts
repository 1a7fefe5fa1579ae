import { ERROR_CODES, ERROR_TABLE, type ErrorCode, type ErrorSurface } from './error-codes.js';

export type { ErrorCode } from './error-codes.js';

/**
 * The product's one error class. Every error it raises carries a code of the table in
 * error-codes.ts, and each edge maps it from there, once: the CLI's exit code, an HTTP
 * answer's status and body, a login's RFC 6749 body, a GraphQL `extensions.code`, a tool
 * result, a dead letter's reason.
 */
export const ErrorCodes = Object.fromEntries(ERROR_CODES.map((c) => [c, c])) as { readonly [C in ErrorCode]: C };

export interface AppErrorOptions {
  cause?: unknown;
  details?: unknown;
  /** Where in an input the problem is (`input[0].endpoint_config.url`): the message starts with it. */
  path?: string;
  /** An HTTP status other than the code's usual one: only one its row lists in `alsoStatus`. */
  status?: number;
  /** Seconds a throttled caller should wait (a login's `Retry-After`). */
  retryAfterS?: number;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly path: string;
  /** The HTTP status of an answer carrying it; null where it is no HTTP answer. */
  readonly status: number | null;
  readonly retryAfterS: number | null;

  /** `message` defaults to the code's own (error-codes.ts). */
  constructor(code: ErrorCode, message?: string, options: AppErrorOptions = {}) {
    const text = message ?? ERROR_TABLE[code].message;
    const path = options.path ?? '';
    super(path ? `${path}: ${text}` : text, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.path = path;
    this.status = statusOf(code, options.status);
    this.retryAfterS = options.retryAfterS ?? null;
  }
}

function statusOf(code: ErrorCode, asked: number | undefined): number | null {
  const row: { status: number | null; alsoStatus?: readonly number[] } = ERROR_TABLE[code];
  if (asked === undefined || asked === row.status) return row.status;
  // A programming error: the table is where a code's statuses are decided and documented.
  if (!row.alsoStatus?.includes(asked)) throw new Error(`error code ${code} is never answered with HTTP ${asked}`);
  return asked;
}

export function isAppError(err: unknown, code?: ErrorCode): err is AppError {
  return err instanceof AppError && (code === undefined || err.code === code);
}

/** An error of the product whose code a surface gives (a webhook input's, a tool result's). */
export function isErrorOf(err: unknown, surface: ErrorSurface): err is AppError {
  return err instanceof AppError && (ERROR_TABLE[err.code].surface as readonly ErrorSurface[]).includes(surface);
}
