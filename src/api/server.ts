import type { FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../core/clock.js';
import { buildApi, type ApiExtension } from './app.js';
import { DEFAULT_LIMITS } from './graphql/limits.js';
import { catalogueListSizes } from './graphql/list-sizes.js';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { AccountService } from './auth/accounts.js';
import type { ScryptCost } from './auth/passwords.js';
import { TokenService } from './auth/tokens.js';
import type { SeriesPort } from './reporting/series.js';
import type { ApiStatePort } from './state/port.js';
import type { StatusSource } from './status.js';
import type { WebhookService } from '../webhooks/service.js';
import type { MetricsSource } from './metrics.js';
import type { LiveHub } from './live/hub.js';
import type { LiveLimits } from './live/routes.js';
import { hostPolicy } from './host-guard.js';

/**
 * The API as a listening HTTP server over the organisations of one or more scenarios
 * (`occusim serve`, `occusim run --serve`). Tokens and rate limits follow the wall clock:
 * they face real clients.
 */
export interface ApiServerOptions {
  /** The platform's assets, users and clients (shared with ingest: one catalogue). */
  catalogue: AssetCatalogue;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** API identifier clients send as `audience`; existing clients send the production one. */
  audience?: string;
  /** Audiences accepted at login beside `audience`; default: the reference platform's published one. */
  alsoAcceptedAudiences?: readonly string[];
  issuer?: string;
  introspection?: boolean;
  clock?: Clock;
  /** Per-minute series for reporting and stats (absent: those routes are not served). */
  series?: SeriesPort;
  /** Keeps API-created clients and mutations across restarts (`--db`); absent: in memory. */
  state?: ApiStatePort;
  /** Live hive and sensor status (the cloud store). */
  status?: StatusSource;
  /** Routes served beside the API's own (the MCP endpoint). */
  extensions?: readonly ApiExtension[];
  /** Webhook subscriptions (the platform's, when it delivers webhooks). */
  webhooks?: WebhookService;
  /** The GraphQL IDE at /api/graphiql (default on: a served API is meant to be explored; `--no-graphiql` turns it off). */
  graphiql?: boolean;
  /** The live view (`/live`). */
  live?: LiveHub;
  /** Prometheus `/metrics` over the platform's counters (absent: not served). */
  metrics?: Omit<MetricsSource, 'catalogue'>;
  /** The scraper's bearer token for `/metrics` with tenant labels (`--metrics-token`); absent: public series only. */
  metricsToken?: string;
  /** Host names served beside the listen address and loopback (`--allowed-host`; host-guard.ts). */
  allowedHosts?: readonly string[];
  /** Caps of `/live`'s streams (default `LIVE_LIMITS`). */
  liveLimits?: LiveLimits;
}

/** How a platform serves its API (`serve`, `run --serve`): one shape from the command line to the listener. */
export interface ServedApi {
  port: number;
  host?: string;
  audience: string;
  /** The GraphQL IDE page (default on). */
  graphiql?: boolean;
  /** `--metrics-token`: the operator's scraper sees `/metrics` per tenant with it. */
  metricsToken?: string;
  /** `--allowed-host`: names served beside the listen address and loopback. */
  allowedHosts?: readonly string[];
}

export interface ApiServer {
  url: string;
  port: number;
  app: FastifyInstance;
  close(): Promise<void>;
}

export const DEFAULT_AUDIENCE = 'https://api.occusim.local';
/** The audience the reference platform publishes for client-credential logins: its clients send it unchanged. */
export const PUBLISHED_AUDIENCE = 'https://butlrauth/';

/**
 * The registry and accounts the API serves: the scenarios' own, with what `state` kept of
 * earlier API changes applied on top (clients created or deleted, mutations, tags).
 */
export async function apiServices(
  catalogue: AssetCatalogue,
  clock: Clock,
  state: ApiStatePort | null,
  cost?: ScryptCost,
): Promise<{ accounts: AccountService; assets: AssetCatalogue }> {
  const accounts = await AccountService.fromCatalogue(catalogue, clock, cost, state);
  for (const orgId of catalogue.orgs.keys()) {
    const overlay = await state?.overlay(orgId);
    if (!overlay) continue;
    // Not silent: a refused item is an API change the operator will not find after the restart.
    for (const r of catalogue.applyOverlay(orgId, overlay))
      process.emitWarning(
        `organisation ${orgId}: stored ${r.kind} ${r.id} not restored: ${r.reason}`,
        'OccusimWarning',
      );
  }
  return { accounts, assets: catalogue };
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const clock = opts.clock ?? systemClock;
  const host = opts.host ?? '127.0.0.1';
  const tokens = await TokenService.create({
    issuer: opts.issuer ?? 'https://auth.occusim.local/',
    audience: opts.audience ?? DEFAULT_AUDIENCE,
    alsoAccepted: opts.alsoAcceptedAudiences ?? [PUBLISHED_AUDIENCE],
    accessTtlS: 86_400,
    refreshTtlS: 30 * 86_400,
    clock,
  });
  const { accounts, assets } = await apiServices(opts.catalogue, clock, opts.state ?? null);
  const app = await buildApi({
    assets,
    accounts,
    tokens,
    clock,
    introspection: opts.introspection ?? true,
    ...(opts.graphiql !== undefined ? { graphiql: opts.graphiql } : {}),
    limits: { ...DEFAULT_LIMITS, listSize: catalogueListSizes(assets) },
    ...(opts.series ? { series: opts.series } : {}),
    ...(opts.state ? { state: opts.state } : {}),
    ...(opts.status ? { status: opts.status } : {}),
    ...(opts.extensions ? { extensions: opts.extensions } : {}),
    ...(opts.webhooks ? { webhooks: opts.webhooks } : {}),
    ...(opts.live ? { live: opts.live } : {}),
    ...(opts.metrics ? { metrics: { ...opts.metrics, catalogue: assets } } : {}),
    ...(opts.metricsToken !== undefined ? { metricsToken: opts.metricsToken } : {}),
    ...(opts.liveLimits ? { liveLimits: opts.liveLimits } : {}),
    hosts: hostPolicy(host, opts.allowedHosts ?? []),
  });
  await app.listen({ host, port: opts.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://${host}:${port}`, port, app, close: () => closeWithin(app, CLOSE_GRACE_MS) };
}

/** Wall ms a close waits for requests in flight before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Closes the server: idle connections at once (fastify's default), requests in flight given
 * `graceMs` to finish, then their connections cut. A client that keeps a request open (a stuck
 * stream, a peer that stopped reading) must not hold a stop or a test's teardown forever.
 */
async function closeWithin(app: FastifyInstance, graceMs: number): Promise<void> {
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}
