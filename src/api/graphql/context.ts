import type { CodeOf } from '../../core/error-codes.js';
import { GraphQLError } from 'graphql';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import type { AssetOf } from '../../assets/model.js';
import type { Principal } from '../auth/tokens.js';
import type { RequestStatus } from '../status.js';
import type { WebhookService } from '../../webhooks/service.js';

/** What every resolver gets: the caller, the catalogue, live device status; and the checks they share. */
export interface GqlContext {
  principal: Principal;
  assets: AssetCatalogue;
  /** Live device status from the cloud store; absent (in-process apps without a store): devices read as online, never heard. */
  status?: RequestStatus;
  /** Webhook subscriptions (absent: webhooks are not enabled on this platform). */
  webhooks?: WebhookService;
}

/** A GraphQL error with a code of the error table (core/error-codes.ts) in `extensions.code`. */
export function gqlError(code: CodeOf<'graphql'>, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

/** The caller's organisation's item of that kind, or NOT_FOUND (as for an id that does not exist). */
export function mustGet<K extends Parameters<AssetCatalogue['get']>[0]>(
  ctx: GqlContext,
  kind: K,
  id: string,
): AssetOf<K> {
  const item = ctx.assets.get(kind, ctx.principal.orgId, id);
  if (!item) throw gqlError('NOT_FOUND', `${kind} ${id} does not exist`);
  return item;
}

/** Throws FORBIDDEN unless the token carries the scope. */
export function need(ctx: GqlContext, scope: string): void {
  if (!ctx.principal.scopes.has(scope)) throw gqlError('FORBIDDEN', `this operation needs the scope ${scope}`);
}
