import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { LiveHub } from '../../../src/api/live/hub.js';
import type { LiveLimits } from '../../../src/api/live/routes.js';
import { startApiServer, type ApiServer } from '../../../src/api/server.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import type { ScenarioModel } from '../../../src/scenario/model.js';

/**
 * A listening API over two organisations (quickstart's and office-day's) with a live hub, for
 * the `/live` route tests. The hub's store reads answer at once from memory: what is under
 * test is HTTP, tokens and sockets, not the store.
 */
export const AUDIENCE = 'https://api.occusim.test';

export function load(name: string): ScenarioModel {
  const r = loadScenarioFile(new URL(`../../../scenarios/${name}.yaml`, import.meta.url).pathname);
  if (!r.ok) throw new Error(`${name} does not load`);
  return r.model;
}

export interface LiveServer {
  server: ApiServer;
  hub: LiveHub;
  own: ScenarioModel;
  other: ScenarioModel;
  token(of: ScenarioModel): Promise<string>;
  close(): Promise<void>;
}

const noStatus = {
  hiveStatuses: (ids: readonly string[]) => Promise.resolve(ids.map(() => null)),
  sensorStatuses: (ids: readonly string[]) => Promise.resolve(ids.map(() => null)),
};

export async function liveServer(limits?: LiveLimits, minGapMs = 0): Promise<LiveServer> {
  const own = load('quickstart');
  const other = load('office-day');
  const catalogue = catalogueFromScenario(own, other);
  const hub = new LiveHub({
    assets: catalogue,
    status: noStatus,
    now: () => performance.now(),
    minGapMs,
    measured: {
      presence: async () => null,
      traffic: async () => ({ in: 0, out: 0 }),
      counters: () => ({
        batchesReceived: 0,
        batchesProcessed: 0,
        duplicateBatches: 0,
        packetsProcessed: 0,
        packetsStoredBefore: 0,
        deadLettered: 0,
        eventsEmitted: 0,
        lateInWindow: 0,
        lateBeyondWindow: 0,
      }),
    },
  });
  const server = await startApiServer({
    catalogue,
    port: 0,
    audience: AUDIENCE,
    live: hub,
    ...(limits ? { liveLimits: limits } : {}),
  });
  const token = async (of: ScenarioModel): Promise<string> => {
    const c = of.clients[0] as ScenarioModel['clients'][number];
    const res = await fetch(`${server.url}/api/v2/clients/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: c.clientId,
        client_secret: c.secret,
        audience: AUDIENCE,
      }),
    });
    return ((await res.json()) as { access_token: string }).access_token;
  };
  return { server, hub, own, other, token, close: async () => (hub.close(), server.close()) };
}

/** An open GET (a stream stays open): its answer's head, and the request to end it. */
export function open(
  url: string,
  headers: Record<string, string>,
): Promise<{ res: IncomingMessage; req: ClientRequest; body(): Promise<string> }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const ended = new Promise<string>((r) => res.once('end', () => r(Buffer.concat(chunks).toString())));
      resolve({ res, req, body: () => ended });
    });
    req.on('error', reject);
    req.end();
  });
}
