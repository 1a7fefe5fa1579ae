import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import type { LiveHub } from './hub.js';
import { LIVE_PAGE } from './page.js';

/**
 * `/live` on a served run: the page, the floor plans it draws (`/live/plan`), and the SSE
 * stream of one floor (`/live/events?floor=ID`). Read-only and unauthenticated like the page
 * of a local tool: it shows positions and counts of simulated people, no credentials.
 */
export interface LivePlan {
  floors: Array<{ id: string; name: string }>;
  floor: {
    id: string;
    name: string;
    outline: ReadonlyArray<readonly [number, number]>;
    rooms: Array<{ id: string; name: string; polygon: ReadonlyArray<readonly [number, number]> }>;
    zones: Array<{ id: string; name: string; polygon: ReadonlyArray<readonly [number, number]> }>;
    doors: Array<{ id: string; name: string; line: readonly [readonly [number, number], readonly [number, number]] }>;
    sensors: Array<{ id: string; name: string; mode: string; center: readonly [number, number]; doorId: string | null }>;
    hives: Array<{ id: string; name: string; position: readonly [number, number] }>;
  } | null;
}

export function livePlan(assets: AssetCatalogue, floorId: string | undefined): LivePlan & { zone: string } {
  const floors = assets.all('floor').map((f) => ({ id: f.id, name: f.name }));
  const f = assets.find('floor', floorId ?? floors[0]?.id ?? '')?.item;
  if (!f) return { floors, floor: null, zone: 'UTC' };
  const pt = (p: readonly [number, number]): readonly [number, number] => [p[0], p[1]];
  return {
    floors,
    zone: assets.timezoneOf(f.id),
    floor: {
      id: f.id,
      name: f.name,
      outline: f.outline.map(pt),
      rooms: f.roomIds.flatMap((id) => {
        const r = assets.find('room', id)?.item;
        return r ? [{ id, name: r.name, polygon: r.polygon.map(pt) }] : [];
      }),
      zones: f.zoneIds.flatMap((id) => {
        const z = assets.find('zone', id)?.item;
        return z ? [{ id, name: z.name, polygon: z.polygon.map(pt) }] : [];
      }),
      doors: f.doorIds.flatMap((id) => {
        const d = assets.doors.get(id)?.item;
        return d ? [{ id, name: d.name, line: [pt(d.line[0]), pt(d.line[1])] as const }] : [];
      }),
      sensors: f.sensorIds.flatMap((id) => {
        const s = assets.find('sensor', id)?.item;
        return s ? [{ id, name: s.name, mode: s.mode, center: pt(s.center), doorId: s.doorId }] : [];
      }),
      hives: f.hiveIds.flatMap((id) => {
        const h = assets.find('hive', id)?.item;
        return h ? [{ id, name: h.name, position: pt(h.position) }] : [];
      }),
    },
  };
}

export function registerLive(app: FastifyInstance, hub: LiveHub, assets: AssetCatalogue): void {
  // Open streams would hold the server's close: they end first.
  const open = new Set<ServerResponse>();
  app.addHook('preClose', (done) => {
    for (const res of open) res.end();
    open.clear();
    done();
  });
  app.get('/live', { schema: { hide: true } }, (_req, reply) => reply.type('text/html; charset=utf-8').send(LIVE_PAGE));
  app.get<{ Querystring: { floor?: string } }>('/live/plan', { schema: { hide: true } }, (req) => livePlan(assets, req.query.floor));
  app.get<{ Querystring: { floor?: string } }>('/live/events', { schema: { hide: true } }, (req, reply) => {
    const floorId = req.query.floor ?? assets.all('floor')[0]?.id ?? '';
    if (!assets.find('floor', floorId)) return reply.code(404).send({ code: 'NOT_FOUND', message: `no floor ${floorId}` });
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(': occusim live\n\n');
    open.add(res);
    const stop = hub.subscribe(floorId, (e) => res.write(`data: ${JSON.stringify(e)}\n\n`));
    req.raw.on('close', () => {
      stop();
      open.delete(res);
    });
    return reply;
  });
}
