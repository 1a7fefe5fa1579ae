import type { FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../core/clock.js';
import type { ScenarioModel } from '../scenario/model.js';
import { buildApi } from './app.js';
import { AssetService } from './assets/asset-service.js';
import { AccountService } from './auth/accounts.js';
import { TokenService } from './auth/tokens.js';
import type { SeriesPort } from './reporting/series.js';

/**
 * The API as a listening HTTP server over the organisations of one or more scenarios
 * (`occusim serve`, `occusim run --serve`). Tokens and rate limits follow the wall clock:
 * they face real clients.
 */
export interface ApiServerOptions {
  models: readonly ScenarioModel[];
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** API identifier clients send as `audience`; existing clients send the production one. */
  audience?: string;
  issuer?: string;
  introspection?: boolean;
  clock?: Clock;
  /** Per-minute series for reporting and stats (absent: those routes are not served). */
  series?: SeriesPort;
}

export interface ApiServer {
  url: string;
  port: number;
  app: FastifyInstance;
  close(): Promise<void>;
}

export const DEFAULT_AUDIENCE = 'https://api.occusim.local';

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const clock = opts.clock ?? systemClock;
  const host = opts.host ?? '127.0.0.1';
  const tokens = await TokenService.create({
    issuer: opts.issuer ?? 'https://auth.occusim.local/',
    audience: opts.audience ?? DEFAULT_AUDIENCE,
    accessTtlS: 86_400,
    refreshTtlS: 30 * 86_400,
    clock,
  });
  const accounts = await AccountService.fromModels(opts.models, clock);
  const app = await buildApi({
    assets: new AssetService(opts.models),
    accounts,
    tokens,
    clock,
    introspection: opts.introspection ?? true,
    ...(opts.series ? { series: opts.series } : {}),
  });
  await app.listen({ host, port: opts.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://${host}:${port}`, port, app, close: () => app.close() };
}
