/**
 * Tool errors (platform-reference §5): every failure reaches the assistant as a tool result
 * with `isError: true` and one of six codes, never as a protocol error or a crash. Mapped
 * once, here, from what the HTTP API answered.
 */
export const ToolErrorCodes = {
  AUTH_EXPIRED: 'AUTH_EXPIRED',
  RATE_LIMITED: 'RATE_LIMITED',
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  NOT_FOUND: 'NOT_FOUND',
  NETWORK_ERROR: 'NETWORK_ERROR',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;

export type ToolErrorCode = (typeof ToolErrorCodes)[keyof typeof ToolErrorCodes];

export class ToolError extends Error {
  readonly code: ToolErrorCode;

  constructor(code: ToolErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.code = code;
  }
}

export const notFound = (message: string): ToolError => new ToolError('NOT_FOUND', message);
export const invalid = (message: string): ToolError => new ToolError('VALIDATION_FAILED', message);

/** An HTTP answer of the platform API as a tool error (401/403 → AUTH_EXPIRED, 429, 4xx, 5xx). */
export function fromHttpStatus(status: number, what: string, detail: string): ToolError {
  const message = `${what}: HTTP ${status}${detail ? ` — ${detail}` : ''}`;
  if (status === 401 || status === 403) return new ToolError('AUTH_EXPIRED', message);
  if (status === 429) return new ToolError('RATE_LIMITED', message);
  if (status === 404) return new ToolError('NOT_FOUND', message);
  if (status >= 400 && status < 500) return new ToolError('VALIDATION_FAILED', message);
  return new ToolError('INTERNAL_ERROR', message);
}

/** GraphQL `extensions.code` as a tool error code. */
export function fromGraphqlCode(code: unknown): ToolErrorCode {
  if (code === 'NOT_FOUND') return 'NOT_FOUND';
  if (code === 'FORBIDDEN' || code === 'UNAUTHORIZED') return 'AUTH_EXPIRED';
  if (code === 'BAD_USER_INPUT' || code === 'GRAPHQL_VALIDATION_FAILED') return 'VALIDATION_FAILED';
  return 'INTERNAL_ERROR';
}

/** Anything thrown inside a tool, as a tool error: unknown errors become INTERNAL_ERROR with their message. */
export function asToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ToolError('INTERNAL_ERROR', message, { cause: err });
}
