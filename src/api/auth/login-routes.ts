import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { oauthBody } from '../errors.js';
import type { AccountService } from './accounts.js';
import type { FailureLimiter } from './rate-limit.js';
import { VerificationQueue } from './verify-queue.js';
import { routeOptions } from '../route-schemas.js';
import { ALL_SCOPES, formatScopes } from './scopes.js';
import type { Principal, TokenService } from './tokens.js';

/**
 * Login operations (spec §4.1, §4.2, §5; platform-reference §1): password grant with
 * refresh and ID tokens, refresh-token grant (an extension on the same path), and
 * client-credentials grant. Errors per RFC 6749 §5.2, never cached.
 */
export interface LoginDeps {
  accounts: AccountService;
  tokens: TokenService;
  limiter: FailureLimiter;
  /** Bounds concurrent password verifications, fair across sources (default: a queue per registration). */
  verifications?: VerificationQueue;
  /** client_id carried by password-grant tokens: the platform's first-party application. */
  firstPartyClientId: string;
}

type Body = Record<string, unknown>;

/** One login request: its body and the address it came from (the rate limits' source). */
interface Attempt {
  body: Body;
  source: string;
  verifications: VerificationQueue;
}

function str(body: Body, field: string): string | null {
  const v = body[field];
  return typeof v === 'string' && v.length > 0 ? v : null;
}

function bodyOf(req: FastifyRequest): Body {
  const b = req.body;
  if (typeof b !== 'object' || b === null || Array.isArray(b))
    throw new AppError(ErrorCodes.LOGIN_INVALID_REQUEST, 'the body must be a JSON object');
  return b as Body;
}

function checkLimit(deps: LoginDeps, key: string, source: string): void {
  const wait = deps.limiter.retryAfterS(key, source);
  if (wait > 0)
    throw new AppError(ErrorCodes.LOGIN_THROTTLED, `too many failed attempts; retry in ${wait} s`, {
      retryAfterS: wait,
    });
}

async function passwordGrant(
  deps: LoginDeps,
  { body, source, verifications }: Attempt,
): Promise<Record<string, unknown>> {
  const username = str(body, 'username');
  const password = str(body, 'password');
  if (!username || !password)
    throw new AppError(ErrorCodes.LOGIN_INVALID_REQUEST, 'username and password are required');
  const key = `user:${username.toLowerCase()}`;
  checkLimit(deps, key, source);
  const user = await verifications.run(source, () => deps.accounts.authenticateUser(username, password));
  if (!user) {
    deps.limiter.fail(key, source);
    throw new AppError(ErrorCodes.LOGIN_INVALID_GRANT, 'wrong username or password');
  }
  deps.limiter.succeed(key, source);
  const principal: Principal = {
    sub: user.id,
    orgId: user.orgId,
    clientId: deps.firstPartyClientId,
    scopes: new Set(ALL_SCOPES),
    kind: 'user',
    operator: false,
  };
  return userTokens(deps, principal, user.username);
}

async function userTokens(deps: LoginDeps, principal: Principal, username: string): Promise<Record<string, unknown>> {
  const access = await deps.tokens.issueAccess(principal);
  return {
    access_token: access.token,
    refresh_token: deps.tokens.issueRefresh(principal),
    id_token: await deps.tokens.issueIdToken(principal, username),
    scope: formatScopes(principal.scopes),
    expires_in: access.expiresIn,
    token_type: 'Bearer',
  };
}

async function refreshGrant(deps: LoginDeps, body: Body): Promise<Record<string, unknown>> {
  const token = str(body, 'refresh_token');
  if (!token) throw new AppError(ErrorCodes.LOGIN_INVALID_REQUEST, 'refresh_token is required');
  const principal = deps.tokens.redeemRefresh(token);
  const user = principal ? deps.accounts.userById(principal.sub) : undefined;
  if (!principal || !user) throw new AppError(ErrorCodes.LOGIN_INVALID_GRANT, 'refresh token unknown, used or expired');
  return userTokens(deps, principal, user.username);
}

async function clientCredentialsGrant(
  deps: LoginDeps,
  { body, source, verifications }: Attempt,
): Promise<Record<string, unknown>> {
  const grant = str(body, 'grant_type');
  if (!grant) throw new AppError(ErrorCodes.LOGIN_INVALID_REQUEST, 'grant_type is required');
  if (grant !== 'client_credentials')
    throw new AppError(ErrorCodes.LOGIN_UNSUPPORTED_GRANT, `grant_type must be client_credentials, got ${grant}`);
  const clientId = str(body, 'client_id');
  const secret = str(body, 'client_secret');
  const audience = str(body, 'audience');
  if (!clientId || !secret || !audience)
    throw new AppError(ErrorCodes.LOGIN_INVALID_REQUEST, 'client_id, client_secret and audience are required');
  const key = `client:${clientId}`;
  checkLimit(deps, key, source);
  const client = await verifications.run(source, () => deps.accounts.authenticateClient(clientId, secret));
  if (!client) {
    deps.limiter.fail(key, source);
    throw new AppError(ErrorCodes.LOGIN_INVALID_CLIENT, 'client authentication failed');
  }
  deps.limiter.succeed(key, source);
  if (!deps.tokens.acceptsAudience(audience))
    throw new AppError(ErrorCodes.LOGIN_AUDIENCE_UNKNOWN, `unknown audience ${JSON.stringify(audience)}`);
  const principal: Principal = {
    sub: client.clientId,
    orgId: client.orgId,
    clientId: client.clientId,
    scopes: new Set(client.scopes),
    kind: 'client',
    operator: false,
  };
  const access = await deps.tokens.issueAccess(principal);
  return {
    access_token: access.token,
    scope: formatScopes(principal.scopes),
    expires_in: access.expiresIn,
    token_type: 'Bearer',
  };
}

/** A login refused: RFC 6749's body, or null when the error is not a login's (it goes on to the app's handler). */
function sendOAuthError(reply: FastifyReply, err: unknown): FastifyReply | null {
  const body = err instanceof AppError && err.status !== null ? oauthBody(err) : null;
  if (body === null) return null;
  if ((err as AppError).retryAfterS !== null) void reply.header('Retry-After', String((err as AppError).retryAfterS));
  return reply.code((err as AppError).status as number).send(body);
}

export function registerLoginRoutes(app: FastifyInstance, deps: LoginDeps): void {
  const verifications = deps.verifications ?? new VerificationQueue();
  const handle =
    (grant: (attempt: Attempt) => Promise<Record<string, unknown>>) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      void reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
      try {
        // The route's schema (route-schemas.ts) refused the body: an OAuth invalid_request.
        if (req.validationError) throw new AppError(ErrorCodes.LOGIN_INVALID_REQUEST, req.validationError.message);
        // req.ip is the socket's peer (no trustProxy): a client cannot choose its source by a header.
        return await grant({ body: bodyOf(req), source: req.ip, verifications });
      } catch (err) {
        const sent = sendOAuthError(reply, err);
        if (sent !== null) return sent;
        throw err;
      }
    };
  app.post(
    '/api/v2/login',
    routeOptions('POST /api/v2/login'),
    handle((attempt) => {
      const grant = attempt.body.grant_type ?? 'password';
      if (grant === 'password') return passwordGrant(deps, attempt);
      if (grant === 'refresh_token') return refreshGrant(deps, attempt.body);
      throw new AppError(
        ErrorCodes.LOGIN_UNSUPPORTED_GRANT,
        `grant_type must be password or refresh_token, got ${String(grant)}`,
      );
    }),
  );
  app.post(
    '/api/v2/clients/login',
    routeOptions('POST /api/v2/clients/login'),
    handle((attempt) => clientCredentialsGrant(deps, attempt)),
  );
  app.get('/.well-known/jwks.json', () => deps.tokens.jwks());
}
