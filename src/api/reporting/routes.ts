import type { FastifyInstance } from 'fastify';
import type { AssetService } from '../assets/asset-service.js';
import { authenticate } from '../auth/guard.js';
import type { TokenService } from '../auth/tokens.js';
import { forbidden } from '../errors.js';
import { computePoints } from './report.js';
import { parseReportingRequest } from './request.js';
import type { SeriesPort } from './series.js';
import { group, paginate, toCsv } from './shape.js';

/** `POST /api/v3/reporting` (platform-reference §3): validated whole, then computed. */
export interface ReportingDeps {
  assets: AssetService;
  tokens: TokenService;
  series: SeriesPort;
}

export function registerReportingRoutes(app: FastifyInstance, deps: ReportingDeps): void {
  app.post('/api/v3/reporting', async (req, reply) => {
    const principal = await authenticate(req, deps.tokens);
    const q = parseReportingRequest(req.body);
    if (!principal.scopes.has('read:spaces') && !principal.scopes.has('read:rooms')) throw forbidden('reporting needs read:spaces or read:rooms');
    const points = computePoints(deps.assets, deps.series, principal.orgId, q);
    if (q.groupBy) return { data: group(points, q.groupBy) };
    const { items, pageInfo } = paginate(points, q.page);
    if (q.format === 'csv') {
      void reply.header('content-type', 'text/csv; charset=utf-8');
      if (pageInfo) void reply.header('x-page-info', JSON.stringify(pageInfo));
      return toCsv(items);
    }
    return pageInfo ? { data: items, page_info: pageInfo } : { data: items };
  });
}
