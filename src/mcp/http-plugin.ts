import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../api/auth/guard.js';
import { LOOPBACK_ONLY, type HostPolicy } from '../api/host-guard.js';
import type { TokenService } from '../api/auth/tokens.js';
import type { ApiExtension } from '../api/app.js';
import { systemClock, type Clock } from '../core/clock.js';
import { PresentedToken } from './auth.js';
import { toolContext } from './context.js';
import { injectPort } from './http-port.js';
import { createMcpServer } from './server.js';
import { readSettings, type McpSettings } from './settings.js';
import type { ToolContext } from './tool.js';

/**
 * The same ten tools over Streamable HTTP at `/mcp` on the platform's API port (issue 13,
 * item 6), so an assistant can use a served run without spawning a process. Stateless: each
 * POST carries one JSON-RPC message and gets a JSON answer; GET (server-sent stream) and
 * DELETE (session end) are 405, as the transport spec allows for servers without sessions.
 *
 * Auth is the API's own: the caller's bearer token is verified here (401 with
 * `WWW-Authenticate: Bearer` otherwise) and then presented to the API by every call the tools
 * make, in process (`inject`), so isolation and scopes are exactly the HTTP API's. Browsers'
 * cross-site requests are refused by Host and Origin together (DNS rebinding, MCP transport
 * spec; api/host-guard.ts): both must name this server, a loopback host or an `--allowed-host`.
 */
export interface McpHttpOptions {
  tokens: TokenService;
  clock?: Clock;
  settings?: McpSettings;
  /** Which Host and Origin are served (the API's policy; default: loopback names only). */
  hosts?: HostPolicy;
}

export const MCP_PATH = '/mcp';
/** Contexts (and their caches) are kept per token, never shared between callers; at most this many. */
const MAX_CONTEXTS = 64;

export async function mcpHttpPlugin(app: FastifyInstance, opts: McpHttpOptions): Promise<void> {
  const clock = opts.clock ?? systemClock;
  const hosts = opts.hosts ?? LOOPBACK_ONLY;
  const settings = opts.settings ?? readSettings({});
  const http = injectPort(app);
  const contexts = new Map<string, ToolContext>();
  const contextFor = (token: string): ToolContext => {
    let ctx = contexts.get(token);
    if (!ctx) {
      if (contexts.size >= MAX_CONTEXTS) contexts.delete(contexts.keys().next().value as string);
      contexts.set(token, (ctx = toolContext(settings, http, new PresentedToken(token), clock)));
    }
    return ctx;
  };

  const guard = async (req: FastifyRequest, reply: FastifyReply): Promise<string | null> => {
    // Host with Origin: a rebinding page sends its own name as both, so a same-host Origin proves nothing.
    if (!hosts.hostAllowed(req.headers.host) || !hosts.originAllowed(req.headers.origin)) {
      await reply.code(403).send({ code: 'FORBIDDEN', message: 'host or origin is not allowed' });
      return null;
    }
    try {
      await authenticate(req, opts.tokens);
    } catch (err) {
      void reply.header('WWW-Authenticate', 'Bearer');
      throw err;
    }
    return (req.headers.authorization ?? '').trim().replace(/^Bearer\s+/i, '');
  };

  app.post(MCP_PATH, async (req, reply) => {
    const token = await guard(req, reply);
    if (token === null) return reply;
    const ctx = contextFor(token);
    const server = createMcpServer(() => ctx, { events: ctx.events });
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(req.raw, reply.raw, req.body);
    return reply;
  });
  const notAllowed = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    if ((await guard(req, reply)) === null) return reply;
    return reply.code(405).header('Allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'this MCP server is stateless: POST only' }, id: null });
  };
  app.get(MCP_PATH, notAllowed);
  app.delete(MCP_PATH, notAllowed);
}

/** The MCP endpoint as an extension of the platform's API (`/mcp`, same bearer tokens). */
export const mcpApiExtension: ApiExtension = async (app, deps) => {
  await app.register(mcpHttpPlugin, { tokens: deps.tokens, clock: deps.clock, hosts: deps.hosts });
};
