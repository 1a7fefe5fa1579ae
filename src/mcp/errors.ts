import { AppError, isErrorOf } from '../core/errors.js';
import type { CodeOf } from '../core/error-codes.js';

/**
 * Tool errors (platform-reference §5): every failure reaches the assistant as a tool result
 * with `isError: true` and one of six codes, never as a protocol error or a crash. Mapped
 * once, here, from what the HTTP API answered. The six codes are the rows of the error table
 * (core/error-codes.ts) whose surface is `tool`.
 */
export type ToolErrorCode = CodeOf<'tool'>;

/** A tool's failure: an `AppError` whose code is one of the six. */
export type ToolError = AppError & { code: ToolErrorCode };

export function toolError(code: ToolErrorCode, message: string, options: { cause?: unknown } = {}): ToolError {
  return new AppError(code, message, options) as ToolError;
}

export const isToolError = (err: unknown): err is ToolError => isErrorOf(err, 'tool');

export const notFound = (message: string): ToolError => toolError('NOT_FOUND', message);
export const invalid = (message: string): ToolError => toolError('VALIDATION_FAILED', message);

/** An HTTP answer of the platform API as a tool error (401/403 → AUTH_EXPIRED, 429, 4xx, 5xx). */
export function fromHttpStatus(status: number, what: string, detail: string): ToolError {
  const message = `${what}: HTTP ${status}${detail ? ` — ${detail}` : ''}`;
  if (status === 401 || status === 403) return toolError('AUTH_EXPIRED', message);
  if (status === 429) return toolError('RATE_LIMITED', message);
  if (status === 404) return toolError('NOT_FOUND', message);
  if (status >= 400 && status < 500) return toolError('VALIDATION_FAILED', message);
  return toolError('INTERNAL_ERROR', message);
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
  if (isToolError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return toolError('INTERNAL_ERROR', message, { cause: err });
}
