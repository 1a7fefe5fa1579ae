import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import { authenticate } from '../auth/guard.js';
import type { Principal, TokenService } from '../auth/tokens.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { forbidden } from '../errors.js';
import type { LiveEvent, LiveHub } from './hub.js';
import { LIVE_PAGE } from './page.js';
import { LiveStream, type StreamLimits } from './stream.js';

/**
 * `/live` on a served run: the page, the floor plans it draws (`/live/plan`), and the SSE
 * stream of one floor (`/live/events?floor=ID`). The page itself holds no data and is served
 * to anyone; the plan and the stream need a bearer token of the platform's login (the page
 * logs in, or takes one from its URL's fragment) with `read:spaces`, and show only the
 * token's organisation: another organisation's floor is answered as an unknown one (issue 33,
 * item 5). Streams are capped per subject (user or client) and in total, and a stream that
 * does not read is dropped (stream.ts, item 6).
 */
export interface LiveLimits extends StreamLimits {
  /** Streams one subject (user or client) may hold at once: a few tabs, one per floor. */
  perSubject: number;
  /** Streams the platform holds at once. */
  total: number;
}

export const LIVE_LIMITS: LiveLimits = Object.freeze({
  perSubject: 8,
  total: 256,
  stallMs: 15_000,
  maxBufferedBytes: 4 * 1024 * 1024,
});

export interface LiveDeps {
  hub: LiveHub;
  assets: AssetCatalogue;
  tokens: TokenService;
  limits: LiveLimits;
}

export interface LivePlan {
  floors: Array<{ id: string; name: string }>;
  floor: {
    id: string;
    name: string;
    outline: ReadonlyArray<readonly [number, number]>;
    rooms: Array<{ id: string; name: string; polygon: ReadonlyArray<readonly [number, number]> }>;
    zones: Array<{ id: string; name: string; polygon: ReadonlyArray<readonly [number, number]> }>;
    doors: Array<{ id: string; name: string; line: readonly [readonly [number, number], readonly [number, number]] }>;
    sensors: Array<{
      id: string;
      name: string;
      mode: string;
      center: readonly [number, number];
      doorId: string | null;
    }>;
    hives: Array<{ id: string; name: string; position: readonly [number, number] }>;
  } | null;
}

/** The organisation's floor of that id (or its first floor); undefined when it holds none of that id. */
function floorOf(assets: AssetCatalogue, orgId: string, floorId: string | undefined) {
  const id = floorId ?? assets.list('floor', orgId)[0]?.id ?? '';
  const owned = assets.find('floor', id);
  return owned?.orgId === orgId ? owned.item : undefined;
}

export function livePlan(
  assets: AssetCatalogue,
  orgId: string,
  floorId: string | undefined,
): LivePlan & { zone: string } {
  const floors = assets.list('floor', orgId).map((f) => ({ id: f.id, name: f.name }));
  const f = floorOf(assets, orgId, floorId);
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

async function viewer(req: FastifyRequest, reply: FastifyReply, tokens: TokenService): Promise<Principal> {
  void reply.header('Cache-Control', 'no-store');
  try {
    const principal = await authenticate(req, tokens);
    if (!principal.scopes.has('read:spaces')) throw forbidden('/live needs a token with read:spaces');
    return principal;
  } catch (err) {
    if (err instanceof AppError && err.status === 401) void reply.header('WWW-Authenticate', 'Bearer');
    throw err;
  }
}

/** An event's SSE text, written once for every stream it goes to (the hub shares one event per floor). */
const texts = new WeakMap<LiveEvent, string>();
function sseText(e: LiveEvent): string {
  let text = texts.get(e);
  if (text === undefined) texts.set(e, (text = `data: ${JSON.stringify(e)}\n\n`));
  return text;
}

const tooMany = (message: string): AppError => new AppError(ErrorCodes.RATE_LIMITED, message);

export function registerLive(app: FastifyInstance, deps: LiveDeps): void {
  const { hub, assets, tokens, limits } = deps;
  // Open streams would hold the server's close: they end first.
  const open = new Set<LiveStream>();
  const perSubject = new Map<string, number>();
  app.addHook('preClose', (done) => {
    for (const s of open) s.drop();
    open.clear();
    done();
  });
  app.get('/live', { schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(LIVE_PAGE),
  );
  app.get<{ Querystring: { floor?: string } }>('/live/plan', { schema: { hide: true } }, async (req, reply) => {
    const p = await viewer(req, reply, tokens);
    return livePlan(assets, p.orgId, req.query.floor);
  });
  app.get<{ Querystring: { floor?: string } }>('/live/events', { schema: { hide: true } }, async (req, reply) => {
    const p = await viewer(req, reply, tokens);
    const floor = floorOf(assets, p.orgId, req.query.floor);
    if (!floor)
      return reply
        .code(404)
        .send({ code: 'NOT_FOUND', message: `no floor ${JSON.stringify((req.query.floor ?? '').slice(0, 100))}` });
    const mine = perSubject.get(p.sub) ?? 0;
    if (mine >= limits.perSubject)
      throw tooMany(`at most ${limits.perSubject} /live streams per user or client at once`);
    if (open.size >= limits.total) throw tooMany(`at most ${limits.total} /live streams at once`);
    perSubject.set(p.sub, mine + 1);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(': occusim live\n\n');
    let stop = (): void => undefined;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      stop();
      open.delete(stream);
      const left = (perSubject.get(p.sub) ?? 1) - 1;
      if (left > 0) perSubject.set(p.sub, left);
      else perSubject.delete(p.sub);
    };
    const stream = new LiveStream(res, limits, release);
    open.add(stream);
    stop = hub.subscribe(floor.id, (e) => stream.send(sseText(e)));
    req.raw.on('close', release);
    res.on('close', release);
    return reply;
  });
}
