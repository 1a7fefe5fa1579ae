/**
 * API errors: a stable code, an HTTP status and a message. Mapped once, in the app's error
 * handler, to `{ code, message }` (spec §7); OAuth errors use RFC 6749's body instead.
 */
export const ApiErrorCodes = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CLIENT_NOT_FOUND: 'CLIENT_NOT_FOUND',
  CLIENT_CREATE_FAILED: 'CLIENT_CREATE_FAILED',
  CLIENT_GRANT_CREATE_FAILED: 'CLIENT_GRANT_CREATE_FAILED',
  CLIENT_UPDATE_FAILED: 'CLIENT_UPDATE_FAILED',
  CLIENT_DELETE_FAILED: 'CLIENT_DELETE_FAILED',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL: 'INTERNAL',
} as const;

export type ApiErrorCode = (typeof ApiErrorCodes)[keyof typeof ApiErrorCodes];

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  /** Spec §7: 401 and 500 bodies carry a message only. */
  readonly exposeCode: boolean;

  constructor(status: number, code: ApiErrorCode, message: string, exposeCode = status !== 401 && status < 500) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.exposeCode = exposeCode;
  }
}

export const unauthorized = (message: string): ApiError => new ApiError(401, ApiErrorCodes.UNAUTHORIZED, message);
export const forbidden = (message: string): ApiError => new ApiError(403, ApiErrorCodes.FORBIDDEN, message);
export const invalidRequest = (message: string): ApiError => new ApiError(400, ApiErrorCodes.INVALID_REQUEST, message);

/** OAuth 2.0 token endpoint errors (RFC 6749 §5.2). */
export type OAuthErrorCode =
  'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'access_denied';

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly retryAfterS: number | null;

  constructor(status: number, error: OAuthErrorCode, description: string, retryAfterS: number | null = null) {
    super(description);
    this.name = 'OAuthError';
    this.status = status;
    this.error = error;
    this.retryAfterS = retryAfterS;
  }
}
