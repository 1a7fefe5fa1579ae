import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JSONRPCMessage, Progress } from '@modelcontextprotocol/sdk/types.js';
import type { ApiExtension } from '../../src/api/app.js';
import { storeSeries } from '../../src/api/reporting/store-series.js';
import { startApiServer } from '../../src/api/server.js';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { mcpApiExtension } from '../../src/mcp/http-plugin.js';
import { openStore } from '../../src/store/open.js';
import { envOf } from './org.js';
import { loadModel } from './served.js';

/**
 * The platform API over quickstart's catalogue and a real (empty) SQLite store, with `/mcp`,
 * that logs what the tool server asks of it: each upstream reporting request (held `delayMs`
 * first, so a call of several takes long enough to be cancelled between them), each one its
 * caller abandoned before the answer, and each
 * `notifications/cancelled` posted to `/mcp`, in arrival order. The stdio server reaches it
 * over HTTP, `/mcp` in process: the same hook sees both.
 */
export type Logged = { kind: 'reporting' } | { kind: 'abandoned' } | { kind: 'cancel'; requestId: unknown };

export interface Counted {
  api: string;
  env: Record<string, string>;
  log: Logged[];
  reporting(): number;
  close(): Promise<void>;
}

export async function countedPlatform(delayMs: number): Promise<Counted> {
  const model = loadModel('scenarios/quickstart.yaml');
  const catalogue = catalogueFromScenario(model);
  const store = await openStore({
    kind: 'sqlite',
    path: join(mkdtempSync(join(tmpdir(), 'occusim-mcp-')), 's.sqlite'),
  });
  const log: Logged[] = [];
  const counting: ApiExtension = async (app) => {
    app.addHook('onRequest', async (req, reply) => {
      if (!req.url.startsWith('/api/v3/reporting')) return;
      log.push({ kind: 'reporting' });
      // A caller that aborts its request (fetch's signal) closes the exchange before the answer.
      reply.raw.once('close', () => void (reply.raw.writableFinished || log.push({ kind: 'abandoned' })));
      await sleep(delayMs);
    });
    app.addHook('preHandler', async (req) => {
      if (req.url !== '/mcp' || req.method !== 'POST') return;
      for (const m of [req.body].flat() as Array<{ method?: string; params?: { requestId?: unknown } }>)
        if (m?.method === 'notifications/cancelled') log.push({ kind: 'cancel', requestId: m.params?.requestId });
    });
  };
  const server = await startApiServer({
    catalogue,
    port: 0,
    series: storeSeries(store, catalogue),
    status: store,
    extensions: [counting, mcpApiExtension],
  });
  return {
    api: server.url,
    env: envOf(model, server.url),
    log,
    reporting: () => log.filter((l) => l.kind === 'reporting').length,
    close: async () => {
      await server.close();
      await store.close();
    },
  };
}

/** The progress notifications among a client's received messages from `from` on, as onprogress sees them. */
export function progressOf(received: readonly JSONRPCMessage[], from: number): Progress[] {
  return received.slice(from).flatMap((m) => {
    if (!('method' in m) || m.method !== 'notifications/progress') return [];
    const {
      progressToken: _token,
      _meta,
      ...p
    } = (m.params ?? {}) as Progress & {
      progressToken: unknown;
      _meta?: unknown;
    };
    return [p];
  });
}
