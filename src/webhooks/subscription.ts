import { parseEventTypes, type EventType } from './event-types.js';
import { ErrorCodes, type AppError } from '../core/errors.js';
import { webhookError } from './errors.js';
import { parseFilters, type Filters } from './filters.js';
import { checkUrl, type AddressPolicy } from './address-policy.js';
import { secretKey } from './signing.js';

/**
 * A webhook subscription (platform-reference §4): what the organisation asked for, the
 * endpoint, and the delivery state the engine keeps on it. Created and changed only through
 * `validateCreate`/`validateUpdate`, so everything stored has been checked.
 */
export type WebhookStatus = 'ENABLED' | 'DISABLED';

export interface EndpointConfig {
  url: string;
  /** Per attempt, ms (GraphQL `http_timeout` is in seconds). */
  httpTimeoutMs: number;
  apiKey: { key: string; value: string } | null;
  basicAuth: { username: string; password: string } | null;
}

export interface Subscription {
  id: string;
  orgId: string;
  name: string;
  eventTypes: EventType[];
  status: WebhookStatus;
  filters: Filters;
  sendOnValueChange: boolean;
  endpoint: EndpointConfig;
  /** Signing secrets, newest first: every one signs during a rotation (space-separated signatures). */
  secrets: string[];
  /** Platform-clock instant since which every attempt failed; null while the endpoint answers. */
  failingSinceMs: number | null;
  /** Why it was disabled (by the engine after failing too long, or by the user). */
  disabledReason: string | null;
}

export const DEFAULT_HTTP_TIMEOUT_S = 10;
const MAX_HTTP_TIMEOUT_S = 60;

/** Input of createWebhooks, already in the module's names (the GraphQL adapter maps snake_case). */
export interface CreateInput {
  name?: string | null;
  eventTypes: readonly string[];
  url: string;
  httpTimeoutS?: number | null;
  apiKey?: { key: string; value: string } | null;
  basicAuth?: { username: string; password: string } | null;
  filters?: unknown;
  sendOnValueChange?: boolean | null;
  /** A `whsec_` secret; absent: the caller generates one (and returns it once). */
  secret?: string | null;
}

export interface UpdateInput extends Partial<Omit<CreateInput, 'eventTypes' | 'url'>> {
  id: string;
  eventTypes?: readonly string[] | null;
  url?: string | null;
  status?: WebhookStatus | null;
  /** Rotation: the new secret signs alongside the previous one until the next rotation. */
  rotateSecret?: string | null;
}

const invalid = (path: string, message: string): AppError => webhookError(ErrorCodes.WEBHOOK_INVALID, path, message);

function text(v: unknown, path: string, max: number): string {
  if (typeof v !== 'string' || v.trim() === '') throw invalid(path, 'give a non-empty string');
  if (v.length > max) throw invalid(path, `at most ${max} characters`);
  return v;
}

function timeoutMs(v: number | null | undefined, path: string): number {
  if (v === undefined || v === null) return DEFAULT_HTTP_TIMEOUT_S * 1000;
  if (!Number.isFinite(v) || v <= 0 || v > MAX_HTTP_TIMEOUT_S)
    throw invalid(path, `http_timeout is seconds in (0, ${MAX_HTTP_TIMEOUT_S}]`);
  return Math.round(v * 1000);
}

/**
 * Header names an `api_key` may not take: hop-by-hop headers (RFC 9110 §7.6.1), the message's
 * framing and routing (content-length, transfer-encoding, host, expect) and the body's type.
 * Sent as an api key they can only fail or corrupt every attempt — a second length, a chunked
 * claim on a fixed body, a 100-continue wait — so they are refused when the subscription is made.
 */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-type',
  'expect',
  'host',
]);

function apiKey(v: CreateInput['apiKey'], path: string): EndpointConfig['apiKey'] {
  if (!v) return null;
  const key = text(v.key, `${path}.key`, 256);
  // The key is sent as a header name: a token of RFC 9110 §5.6.2, nothing that could split headers.
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) throw invalid(`${path}.key`, 'a header name (letters, digits, -)');
  if (/^webhook-/i.test(key)) throw invalid(`${path}.key`, "webhook-* headers are the signature's");
  if (RESERVED_HEADERS.has(key.toLowerCase()))
    throw invalid(
      `${path}.key`,
      `${key} frames or routes the request (${[...RESERVED_HEADERS].join(', ')} are refused): an api key there can only fail every delivery`,
    );
  if (RESERVED_HEADERS.has(key.toLowerCase()))
    throw invalid(
      `${path}.key`,
      `${key} frames or routes the request (${[...RESERVED_HEADERS].join(', ')} are refused): an api key there can only fail every delivery`,
    );
  const value = text(v.value, `${path}.value`, 4096);
  if (/[\r\n\0]/.test(value)) throw invalid(`${path}.value`, 'no line breaks');
  return { key, value };
}

function basicAuth(v: CreateInput['basicAuth'], path: string): EndpointConfig['basicAuth'] {
  if (!v) return null;
  const username = text(v.username, `${path}.username`, 256);
  if (username.includes(':')) throw invalid(`${path}.username`, 'no colon (RFC 7617)');
  return { username, password: text(v.password, `${path}.password`, 1024) };
}

/**
 * A new subscription of `orgId` from create input (`path`: where the input came from, for the
 * error), with `id` and a secret already chosen by the caller when the input has none.
 */
export function validateCreate(
  policy: AddressPolicy,
  orgId: string,
  id: string,
  input: CreateInput,
  generatedSecret: string,
  path: string,
): Subscription {
  const secret = input.secret ?? generatedSecret;
  secretKey(secret, `${path}.secret`);
  return {
    id,
    orgId,
    name: input.name === undefined || input.name === null ? id : text(input.name, `${path}.name`, 200),
    eventTypes: parseEventTypes(input.eventTypes, `${path}.event_types`),
    status: 'ENABLED',
    filters: parseFilters(input.filters ?? null, `${path}.filters`),
    sendOnValueChange: input.sendOnValueChange ?? false,
    endpoint: {
      url: checkUrl(policy, input.url, `${path}.endpoint_config.url`).url.href,
      httpTimeoutMs: timeoutMs(input.httpTimeoutS, `${path}.endpoint_config.http_timeout`),
      apiKey: apiKey(input.apiKey, `${path}.endpoint_config.api_key`),
      basicAuth: basicAuth(input.basicAuth, `${path}.endpoint_config.basic_auth`),
    },
    secrets: [secret],
    failingSinceMs: null,
    disabledReason: null,
  };
}

/**
 * The subscription after an update. Setting status ENABLED (or changing the URL) re-enables a
 * disabled endpoint and clears its failing period: the user says the receiver is back.
 */
export function validateUpdate(
  policy: AddressPolicy,
  current: Subscription,
  input: UpdateInput,
  path: string,
): Subscription {
  const next: Subscription = { ...current, endpoint: { ...current.endpoint }, secrets: [...current.secrets] };
  if (input.name !== undefined && input.name !== null) next.name = text(input.name, `${path}.name`, 200);
  if (input.eventTypes) next.eventTypes = parseEventTypes(input.eventTypes, `${path}.event_types`);
  if (input.filters !== undefined) next.filters = parseFilters(input.filters, `${path}.filters`);
  if (input.sendOnValueChange !== undefined && input.sendOnValueChange !== null)
    next.sendOnValueChange = input.sendOnValueChange;
  if (input.url) next.endpoint.url = checkUrl(policy, input.url, `${path}.endpoint_config.url`).url.href;
  if (input.httpTimeoutS !== undefined && input.httpTimeoutS !== null)
    next.endpoint.httpTimeoutMs = timeoutMs(input.httpTimeoutS, `${path}.endpoint_config.http_timeout`);
  if (input.apiKey !== undefined) next.endpoint.apiKey = apiKey(input.apiKey, `${path}.endpoint_config.api_key`);
  if (input.basicAuth !== undefined)
    next.endpoint.basicAuth = basicAuth(input.basicAuth, `${path}.endpoint_config.basic_auth`);
  if (input.rotateSecret) {
    secretKey(input.rotateSecret, `${path}.rotate_secret`);
    next.secrets = [input.rotateSecret, current.secrets[0] as string];
  }
  if (input.status) {
    if (input.status !== 'ENABLED' && input.status !== 'DISABLED')
      throw invalid(`${path}.status`, 'ENABLED or DISABLED');
    next.status = input.status;
    next.disabledReason = input.status === 'DISABLED' ? 'disabled by the user' : null;
    if (input.status === 'ENABLED') next.failingSinceMs = null;
  } else if (input.url && current.status === 'DISABLED' && current.disabledReason !== 'disabled by the user') {
    next.status = 'ENABLED';
    next.disabledReason = null;
    next.failingSinceMs = null;
  }
  return next;
}

/**
 * One subscription per event type per organisation (platform-reference §4): throws
 * WEBHOOK_DUPLICATE_EVENT_TYPE when `candidate` names a type another of the org's holds.
 */
export function checkOnePerType(existing: readonly Subscription[], candidate: Subscription, path: string): void {
  for (const other of existing) {
    if (other.id === candidate.id || other.orgId !== candidate.orgId) continue;
    const clash = candidate.eventTypes.find((t) => other.eventTypes.includes(t));
    if (clash)
      throw webhookError(
        ErrorCodes.WEBHOOK_DUPLICATE_EVENT_TYPE,
        `${path}.event_types`,
        `${clash} already has a subscription (${other.id}) in this organisation`,
      );
  }
}
