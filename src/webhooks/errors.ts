import { AppError, isErrorOf, type AppErrorOptions } from '../core/errors.js';
import type { CodeOf } from '../core/error-codes.js';

/**
 * A subscription's input refused (createWebhooks/updateWebhooks, a scenario's `webhooks:`,
 * the CLI): a `WEBHOOK_*` code of the error table (core/error-codes.ts) and where in the input
 * (`input[0].endpoint_config.url`, `webhooks[1].secret`), which the message starts with.
 * Mapped at each edge: a GraphQL `extensions.code`, a scenario diagnostic, a CLI exit code.
 */
export type WebhookErrorCode = CodeOf<'webhook'>;

export function webhookError(
  code: WebhookErrorCode,
  path: string,
  message: string,
  options: Pick<AppErrorOptions, 'cause'> = {},
): AppError {
  return new AppError(code, message, { ...options, path });
}

export function isWebhookError(err: unknown, code?: WebhookErrorCode): err is AppError {
  return isErrorOf(err, 'webhook') && (code === undefined || err.code === code);
}
