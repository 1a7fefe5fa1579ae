/**
 * Codes of the webhook module, mapped once at each edge: a GraphQL error extension
 * (`extensions.code`), a dead-letter reason, a CLI exit code. The core's `AppError` codes are
 * for the pipeline; a subscription's validation and a destination's refusal have their own.
 */
export const WebhookErrorCodes = {
  /** Input of createWebhooks/updateWebhooks or of a scenario's `webhooks:` is not valid. */
  WEBHOOK_INVALID: 'WEBHOOK_INVALID',
  /** The URL does not parse, or is not http(s), or carries credentials. */
  WEBHOOK_BAD_URL: 'WEBHOOK_BAD_URL',
  /** The destination is a loopback, private, link-local or metadata address not allowed by the operator. */
  WEBHOOK_FORBIDDEN_ADDRESS: 'WEBHOOK_FORBIDDEN_ADDRESS',
  /** The organisation already has a subscription for one of these event types. */
  WEBHOOK_DUPLICATE_EVENT_TYPE: 'WEBHOOK_DUPLICATE_EVENT_TYPE',
  WEBHOOK_NOT_FOUND: 'WEBHOOK_NOT_FOUND',
  /** A signing secret that is not `whsec_` + base64 of 24..64 bytes. */
  WEBHOOK_BAD_SECRET: 'WEBHOOK_BAD_SECRET',
} as const;

export type WebhookErrorCode = (typeof WebhookErrorCodes)[keyof typeof WebhookErrorCodes];

export class WebhookError extends Error {
  readonly code: WebhookErrorCode;
  /** Where in the input (`input[0].endpoint_config.url`, `webhooks[1].secret`). */
  readonly path: string;

  constructor(code: WebhookErrorCode, path: string, message: string, options: { cause?: unknown } = {}) {
    super(path ? `${path}: ${message}` : message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WebhookError';
    this.code = code;
    this.path = path;
  }
}

export function isWebhookError(err: unknown, code?: WebhookErrorCode): err is WebhookError {
  return err instanceof WebhookError && (code === undefined || err.code === code);
}
