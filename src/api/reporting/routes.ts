import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import { authenticate } from '../auth/guard.js';
import type { TokenService } from '../auth/tokens.js';
import { forbidden } from '../errors.js';
import { refuseInvalid, routeOptions } from '../route-schemas.js';
import { computeRuns } from './point-columns.js';
import { csvChunks, jsonChunks, pageOf } from './report-text.js';
import { computePoints } from './report.js';
import { parseReportingRequest } from './request.js';
import type { SeriesPort } from './series.js';
import { defaultGroupKey, group } from './shape.js';

/**
 * `POST /api/v3/reporting` (platform-reference §3): validated whole, then computed. Flat
 * reports (JSON or CSV, paged or not) take the columnar fast path (point-columns.ts,
 * report-text.ts) and stream their text; `group_by` takes the point objects of report.ts.
 */
export interface ReportingDeps {
  assets: AssetCatalogue;
  tokens: TokenService;
  series: SeriesPort;
  /** The platform's present for an organisation, to which relative times and an omitted stop refer. */
  nowMs: (orgId: string) => Promise<number>;
}

export function registerReportingRoutes(app: FastifyInstance, deps: ReportingDeps): void {
  app.post('/api/v3/reporting', routeOptions('POST /api/v3/reporting'), async (req, reply) => {
    const principal = await authenticate(req, deps.tokens);
    refuseInvalid(req);
    const q = parseReportingRequest(req.body, await deps.nowMs(principal.orgId));
    if (!principal.scopes.has('read:spaces') && !principal.scopes.has('read:rooms'))
      throw forbidden('reporting needs read:spaces or read:rooms');
    // group_by needs the point objects (general path); flat reports are written as text.
    if (q.groupBy)
      return {
        data: group(
          await computePoints(deps.assets, deps.series, principal.orgId, q),
          q.groupBy,
          defaultGroupKey(q.ids),
        ),
      };
    const rep = await computeRuns(deps.assets, deps.series, principal.orgId, q);
    const { pageInfo } = pageOf(rep.total, q.page);
    if (pageInfo && q.format === 'csv') void reply.header('x-page-info', JSON.stringify(pageInfo));
    void reply.header(
      'content-type',
      q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    );
    return reply.send(Readable.from(q.format === 'csv' ? csvChunks(rep, q.page) : jsonChunks(rep, q.page)));
  });
}
