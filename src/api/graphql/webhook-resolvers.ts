import { ErrorCodes } from '../../core/errors.js';
import { GraphQLError } from 'graphql';
import { isWebhookError } from '../../webhooks/errors.js';
import type { WebhookService } from '../../webhooks/service.js';
import type { CreateInput, Subscription, UpdateInput } from '../../webhooks/subscription.js';
import { need, type GqlContext } from './context.js';

/**
 * Resolvers of webhook-schema.ts over the webhook service, scoped to the caller's
 * organisation. Webhooks are about the organisation's spaces: reading them needs
 * `read:spaces`, changing them `write:spaces`. A refused input is a GraphQL error whose
 * `extensions.code` is the webhook module's code (`WEBHOOK_FORBIDDEN_ADDRESS`, …) and whose
 * message starts with the place in the input (`input[0].endpoint_config.url: …`), never a crash.
 */
export interface EndpointInput {
  url: string;
  http_timeout?: number | null;
  api_key?: { key: string; value: string } | null;
  basic_auth?: { username: string; password: string } | null;
}
export interface GqlCreate {
  name?: string | null;
  eventTypes: string[];
  endpointConfig: EndpointInput;
  filters?: unknown;
  send_on_value_change?: boolean | null;
  secret?: string | null;
}
export interface GqlUpdate extends Partial<Omit<GqlCreate, 'eventTypes' | 'endpointConfig'>> {
  id: string;
  eventTypes?: string[] | null;
  endpointConfig?: EndpointInput | null;
  status?: string | null;
  rotate_secret?: string | null;
}

function service(ctx: GqlContext): WebhookService {
  if (!ctx.webhooks)
    throw new GraphQLError('webhooks are not enabled on this platform', {
      extensions: { code: ErrorCodes.WEBHOOKS_DISABLED },
    });
  return ctx.webhooks;
}

/** Awaits a service call, mapping its coded errors once, here. */
async function mapped<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (isWebhookError(err)) throw new GraphQLError(err.message, { extensions: { code: err.code } });
    throw err;
  }
}

function toCreate(i: GqlCreate): CreateInput {
  return {
    name: i.name ?? null,
    eventTypes: i.eventTypes,
    url: i.endpointConfig.url,
    httpTimeoutS: i.endpointConfig.http_timeout ?? null,
    apiKey: i.endpointConfig.api_key ?? null,
    basicAuth: i.endpointConfig.basic_auth ?? null,
    filters: i.filters ?? null,
    sendOnValueChange: i.send_on_value_change ?? null,
    secret: i.secret ?? null,
  };
}

function toUpdate(i: GqlUpdate): UpdateInput {
  const u: UpdateInput = { id: i.id };
  if (i.name !== undefined) u.name = i.name;
  if (i.eventTypes) u.eventTypes = i.eventTypes;
  if (i.endpointConfig) {
    u.url = i.endpointConfig.url;
    if (i.endpointConfig.http_timeout !== undefined) u.httpTimeoutS = i.endpointConfig.http_timeout;
    if (i.endpointConfig.api_key !== undefined) u.apiKey = i.endpointConfig.api_key;
    if (i.endpointConfig.basic_auth !== undefined) u.basicAuth = i.endpointConfig.basic_auth;
  }
  if (i.filters !== undefined) u.filters = i.filters;
  if (i.send_on_value_change !== undefined) u.sendOnValueChange = i.send_on_value_change;
  if (i.status) u.status = i.status as NonNullable<UpdateInput['status']>;
  if (i.rotate_secret) u.rotateSecret = i.rotate_secret;
  return u;
}

/** The Webhook type's shape (secrets are never listed). */
export function webhookView(s: Subscription, secret: string | null = null) {
  return {
    id: s.id,
    name: s.name,
    event_types: s.eventTypes,
    status: s.status,
    filters: s.filters,
    send_on_value_change: s.sendOnValueChange,
    endpoint_config: {
      url: s.endpoint.url,
      http_timeout: s.endpoint.httpTimeoutMs / 1000,
      api_key: s.endpoint.apiKey,
      basic_auth: s.endpoint.basicAuth,
    },
    secret,
  };
}

export const webhookQueries = {
  webhooks: (_: unknown, __: unknown, ctx: GqlContext) => (
    need(ctx, 'read:spaces'),
    service(ctx)
      .list(ctx.principal.orgId)
      .map((s) => webhookView(s))
  ),
};

export const webhookMutations = {
  createWebhooks: async (_: unknown, a: { input: GqlCreate[] }, ctx: GqlContext) => {
    need(ctx, 'write:spaces');
    return (await mapped(() => service(ctx).create(ctx.principal.orgId, a.input.map(toCreate)))).map((c) =>
      webhookView(c.subscription, c.secret),
    );
  },
  updateWebhooks: async (_: unknown, a: { input: GqlUpdate[] }, ctx: GqlContext) => {
    need(ctx, 'write:spaces');
    return (await mapped(() => service(ctx).update(ctx.principal.orgId, a.input.map(toUpdate)))).map((s) =>
      webhookView(s),
    );
  },
  deleteWebhooks: (_: unknown, a: { ids: string[] }, ctx: GqlContext) => {
    need(ctx, 'write:spaces');
    return mapped(() => service(ctx).delete(ctx.principal.orgId, a.ids));
  },
};
