import { ERROR_TABLE, type ErrorRow } from '../core/error-codes.js';
import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * The API's edge of the error table (core/error-codes.ts): an `AppError` with a REST code is
 * answered with its status and `{ code, message }` (spec §7); a login code with RFC 6749's
 * body. Mapped once, in the app's error handler and the login routes.
 */
export const unauthorized = (message: string): AppError => new AppError(ErrorCodes.UNAUTHORIZED, message);
export const forbidden = (message: string): AppError => new AppError(ErrorCodes.FORBIDDEN, message);
export const invalidRequest = (message: string): AppError => new AppError(ErrorCodes.INVALID_REQUEST, message);

/** An error the API answers itself: a code with an HTTP status. */
export function isAnswered(err: unknown): err is AppError & { status: number } {
  return err instanceof AppError && err.status !== null;
}

/** Spec §7: 401 and 500 bodies carry a message only; the client-management failures keep their code. */
export function restBody(err: AppError): Record<string, string> {
  const messageOnly = err.status === 401 || err.code === ErrorCodes.INTERNAL;
  return messageOnly ? { message: err.message } : { code: err.code, message: err.message };
}

/** RFC 6749 §5.2's body of a login error: `error` from the table, the message as its description. */
export function oauthBody(err: AppError): { error: string; error_description: string } | null {
  const row: ErrorRow = ERROR_TABLE[err.code];
  return row.oauth === undefined ? null : { error: row.oauth, error_description: err.message };
}
