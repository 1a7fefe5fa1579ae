import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import mercurius from 'mercurius';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type GraphQLFormattedError } from 'graphql';
import type { Clock } from '../core/clock.js';
import type { AssetCatalogue } from '../assets/catalogue.js';
import type { AccountService } from './auth/accounts.js';
import { authenticate } from './auth/guard.js';
import { registerLoginRoutes } from './auth/login-routes.js';
import { FailureLimiter } from './auth/rate-limit.js';
import type { Principal, TokenService } from './auth/tokens.js';
import { registerClientRoutes } from './clients/client-routes.js';
import { registerOpenApiCollector, registerOpenApiPages } from './openapi.js';
import { schemaErrorMessage } from './route-schemas.js';
import { registerMetrics, type MetricsSource } from './metrics.js';
import { registerGraphiql } from './graphiql.js';
import { LOOPBACK_ONLY, registerHostGuard, type HostPolicy } from './host-guard.js';
import type { LiveHub } from './live/hub.js';
import { LIVE_LIMITS, registerLive, type LiveLimits } from './live/routes.js';
import { registerReportingRoutes } from './reporting/routes.js';
import type { SeriesPort } from './reporting/series.js';
import { registerStatsRoutes } from './reporting/stats.js';
import { ErrorCodes } from '../core/errors.js';
import { invalidRequest, isAnswered, restBody } from './errors.js';
import { DEFAULT_LIMITS, queryLimitsRule, type QueryLimits } from './graphql/limits.js';
import { registerAnswerBudget } from './graphql/answer-budget.js';
import { resolvers, type GqlContext } from './graphql/resolvers.js';
import { typeDefs } from './graphql/schema.js';
import { unifyIdStringVariables } from './graphql/string-ids.js';
import type { ApiStatePort } from './state/port.js';
import { platformNow } from './present.js';
import { RequestStatus, type StatusSource } from './status.js';
import type { WebhookService } from '../webhooks/service.js';

/**
 * The platform API as a Fastify app that never listens by itself: tests call `inject()`,
 * `occusim serve` / `run --serve` call `listen()`. Routes: /api/v2 login, /api/v1/client,
 * /api/v3/graphql.
 */
export interface ApiDeps {
  assets: AssetCatalogue;
  accounts: AccountService;
  tokens: TokenService;
  clock: Clock;
  firstPartyClientId?: string;
  /** Per-minute series for `/api/v3/reporting`; the route is absent without it. */
  series?: SeriesPort;
  introspection?: boolean;
  limits?: QueryLimits;
  logger?: boolean;
  /** Where mutations' results are kept across restarts (absent: in memory only). */
  state?: ApiStatePort;
  /** Live hive and sensor status (the cloud store); absent: devices read as online, never heard. */
  status?: StatusSource;
  /** Routes served beside the API's own, behind its tokens (the platform adds the MCP endpoint). */
  extensions?: readonly ApiExtension[];
  /** Webhook subscriptions behind createWebhooks & co. (absent: those answer WEBHOOKS_DISABLED). */
  webhooks?: WebhookService;
  /** Serve the GraphQL IDE at /api/graphiql (default on: a served API is meant to be explored; false: none). */
  graphiql?: boolean;
  /** The live view's state (`/live`, a served run in the platform's thread); absent: no /live. */
  live?: LiveHub;
  /** What `GET /metrics` exposes (the served platform's counters); absent: no /metrics. */
  metrics?: MetricsSource;
  /** The bearer token a scraper sends to see `/metrics` with tenant labels (`--metrics-token`); absent: nobody does. */
  metricsToken?: string;
  /** Which Host and Origin headers every route answers (default: loopback names only). */
  hosts?: HostPolicy;
  /** Caps of `/live`'s streams (default `LIVE_LIMITS`). */
  liveLimits?: LiveLimits;
}

/** Registers more routes on the API app, with the API's token service and clock. */
export type ApiExtension = (
  app: FastifyInstance,
  deps: { tokens: TokenService; clock: Clock; hosts: HostPolicy },
) => Promise<void>;

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

const GRAPHQL_PATH = '/api/v3/graphql';

/**
 * The API's fastify app, assembled in order: the app and its guards, the REST routes and pages,
 * then GraphQL. A foreign Host or Origin is refused before any of them.
 */
export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const app = newApp(deps);
  // First of all hooks: a foreign Host or Origin (DNS rebinding, cross-site) reaches no route.
  const hosts = deps.hosts ?? LOOPBACK_ONLY;
  registerHostGuard(app, hosts);
  await registerRest(app, deps, hosts);
  await registerGraphql(app, deps);
  if (deps.state) persistMutations(app, deps.assets, deps.state);
  return app;
}

function newApp(deps: ApiDeps): FastifyInstance {
  // Ajv checks, never rewrites: no type coercion, no defaults, nothing removed (route-schemas.ts).
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { coerceTypes: false, useDefaults: false, removeAdditional: false } },
    schemaErrorFormatter: (errors, dataVar) => new Error(schemaErrorMessage(errors, dataVar)),
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ code: 'NOT_FOUND', message: `no route ${req.method} ${req.url}` }),
  );
  return app;
}

/** Login, client management, the pages (docs, GraphiQL, /live), /metrics, extensions, reporting and stats. */
async function registerRest(app: FastifyInstance, deps: ApiDeps, hosts: HostPolicy): Promise<void> {
  await registerOpenApiCollector(app);
  const limiter = new FailureLimiter({ maxFailures: 5, windowMs: 60_000, clock: deps.clock });
  registerLoginRoutes(app, {
    accounts: deps.accounts,
    tokens: deps.tokens,
    limiter,
    firstPartyClientId: deps.firstPartyClientId ?? 'client_occusim_dashboard',
  });
  registerClientRoutes(app, { accounts: deps.accounts, tokens: deps.tokens });
  await registerOpenApiPages(app);
  if (deps.metrics) registerMetrics(app, deps.metrics, deps.metricsToken ?? null);
  if (deps.graphiql !== false) registerGraphiql(app, GRAPHQL_PATH);
  if (deps.live)
    registerLive(app, {
      hub: deps.live,
      assets: deps.assets,
      tokens: deps.tokens,
      limits: deps.liveLimits ?? LIVE_LIMITS,
    });
  for (const extend of deps.extensions ?? []) await extend(app, { tokens: deps.tokens, clock: deps.clock, hosts });
  if (deps.series) {
    const { assets, tokens, series } = deps;
    registerReportingRoutes(app, { assets, tokens, series, nowMs: platformNow(assets, deps.clock, deps.status) });
    registerStatsRoutes(app, { assets, tokens, series });
  }
}

/** GraphQL over mercurius, authenticated before it parses anything: an anonymous request is a 401. */
async function registerGraphql(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.addHook('preHandler', async (req) => {
    if (req.url.split('?')[0] !== GRAPHQL_PATH) return;
    req.principal = await authenticate(req, deps.tokens);
    if (req.method === 'POST') checkGraphqlBody(req.body);
  });
  const rules = [
    queryLimitsRule(deps.limits ?? DEFAULT_LIMITS),
    ...(deps.introspection === false ? [NoSchemaIntrospectionCustomRule] : []),
  ];
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: resolvers as never,
    path: GRAPHQL_PATH,
    graphiql: false,
    allowBatchedQueries: false,
    // Compile a query to JS after its first run: large topology queries resolve ~2× faster.
    jit: 1,
    validationRules: rules,
    context: (req): GqlContext => graphqlContext(deps, req.principal as Principal | undefined),
    errorFormatter: (execution) => formatGraphqlErrors(execution.data ?? null, execution.errors ?? []),
    // Errors raised outside execution (authentication in the hook, validation): an error with
    // an HTTP status (core/error-codes.ts) keeps it; everything else is answered as a GraphQL error.
    errorHandler: async (error, _req, reply) => {
      if (isAnswered(error)) {
        await reply.code(error.status).send(restBody(error));
        return;
      }
      const { statusCode, response } = formatGraphqlErrors(null, [toGraphQLError(error)]);
      await reply.code(statusCode).send(response);
    },
  });
  app.graphql.addHook('preValidation', async (schema, document) => unifyIdStringVariables(schema, document));
  registerAnswerBudget(app, (deps.limits ?? DEFAULT_LIMITS).maxAnswerBytes);
}

/**
 * A GraphQL request's context. mercurius also builds it for a request refused before
 * authentication (its error path), so the principal may be absent: the refusal must not turn into a 500.
 */
function graphqlContext(deps: ApiDeps, principal: Principal | undefined): GqlContext {
  const status =
    deps.status && principal ? { status: new RequestStatus(deps.status, deps.assets, principal.orgId) } : {};
  return {
    principal: principal as Principal,
    assets: deps.assets,
    ...status,
    ...(deps.webhooks ? { webhooks: deps.webhooks } : {}),
  };
}

/**
 * Client mistakes that would otherwise reach graphql-js as a TypeError (answered 200
 * INTERNAL): a batch, a non-string query, and a query that is JSON rather than GraphQL
 * (mercurius, failing to parse a query, retries it as a JSON AST and validates whatever
 * that yields). Spec §4.3: the body holds `query`, a string with a GraphQL document.
 */
function checkGraphqlBody(body: unknown): void {
  if (Array.isArray(body)) throw invalidRequest('batched queries are not supported: send one operation per request');
  if (typeof body !== 'object' || body === null) return; // mercurius answers a missing body itself
  const query = (body as { query?: unknown }).query;
  if (typeof query !== 'string') throw invalidRequest('query must be a string holding a GraphQL document');
  if (isJson(query)) throw invalidRequest('query must be a GraphQL document, not JSON');
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * After a mutation operation, the caller's organisation's asset overlay is written to the
 * state store (whole overlay: mutations are rare, and a partial failure of a batch may still
 * have changed something).
 */
function persistMutations(app: FastifyInstance, assets: AssetCatalogue, state: ApiStatePort): void {
  const mutating = new WeakSet<object>();
  app.graphql.addHook('preExecution', async (_schema, document, context) => {
    if (document.definitions.some((d) => d.kind === 'OperationDefinition' && d.operation === 'mutation'))
      mutating.add(context);
  });
  app.graphql.addHook('onResolution', async (_execution, context) => {
    if (!mutating.has(context)) return;
    const orgId = (context as unknown as GqlContext).principal.orgId;
    await state.putOverlay(orgId, assets.overlay(orgId));
  });
}

/** By name, not instanceof: a bundler may load graphql's ESM build beside mercurius's CJS one. */
function isGraphQLError(x: unknown): x is GraphQLError {
  return x instanceof Error && x.name === 'GraphQLError';
}

function toGraphQLError(err: Error): GraphQLError {
  return isGraphQLError(err) ? err : new GraphQLError(err.message, { originalError: err });
}

/** mercurius wraps validation failures in one error holding the list; unwrap it. */
function flatten(errors: readonly GraphQLError[]): GraphQLError[] {
  return errors.flatMap((e) => {
    const inner = (e.originalError as { errors?: unknown } | undefined)?.errors;
    return Array.isArray(inner) ? inner.map((x) => toGraphQLError(x as Error)) : [e];
  });
}

function formatGraphqlErrors(
  data: unknown,
  raw: readonly GraphQLError[],
): { statusCode: number; response: { data: never; errors: GraphQLFormattedError[] } } {
  const first = raw[0]?.originalError as { statusCode?: unknown } | undefined;
  const statusCode =
    data === null && raw.length === 1 && typeof first?.statusCode === 'number' ? first.statusCode : 200;
  return { statusCode, response: { data: data as never, errors: flatten(raw).map((e) => maskError(e, statusCode)) } };
}

/**
 * Errors leave with a message and a code in extensions, never a stack or internal detail.
 * A request refused with a 4xx before execution (body too large, unsupported media type,
 * malformed JSON, a batch, a mutation over GET) is the client's mistake: INVALID_REQUEST
 * with the framework's message, never INTERNAL.
 */
function maskError(err: GraphQLError, status: number): GraphQLFormattedError {
  const original = err.originalError;
  const code = err.extensions?.code;
  // Our own errors carry a code; graphql-js's syntax and validation errors have no original error.
  const known = code !== undefined || original === undefined || isGraphQLError(original);
  const clientError = !known && status >= 400 && status < 500;
  return {
    message: known || clientError ? err.message : 'internal error',
    ...(err.locations ? { locations: err.locations } : {}),
    ...(err.path ? { path: err.path } : {}),
    extensions: {
      code:
        code ?? (known ? 'GRAPHQL_VALIDATION_FAILED' : clientError ? ErrorCodes.INVALID_REQUEST : ErrorCodes.INTERNAL),
    },
  };
}

function errorHandler(err: FastifyError, _req: unknown, reply: FastifyReply): void {
  if (isAnswered(err)) {
    void reply.code(err.status).send(restBody(err));
    return;
  }
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    void reply.code(status).send({ code: 'INVALID_REQUEST', message: err.message });
    return;
  }
  void reply.code(500).send({ message: 'internal error' });
}
