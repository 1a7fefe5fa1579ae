import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authenticate,
  LOOPBACK_ONLY,
  type ApiExtension,
  type HostPolicy,
  type TokenService,
} from '../api/extension-port.js';
import { systemClock, type Clock } from '../core/clock.js';
import { PresentedToken } from './auth.js';
import { toolContext } from './context.js';
import { injectPort } from './http-port.js';
import { createMcpServer } from './server.js';
import { StreamedCalls } from './request-streams.js';
import { readSettings, type McpSettings } from './settings.js';
import type { ToolContext } from './tool.js';

/**
 * The tool server over Streamable HTTP at `/mcp` on the platform's API port (issue 13, item
 * 6), so an assistant can use a served run without spawning a process. An `initialize` opens
 * a session (issue 28): its `Mcp-Session-Id` names it on later POSTs, on the GET that opens
 * its server-sent stream (log messages, resource updates, list changes) and on the DELETE that
 * ends it. Answers are JSON, but for `tools/call`: a server-sent event stream of its progress
 * notifications and then its result (request-streams.ts). A session belongs to the token that opened it (another token
 * gets 404, as an unknown session); each token may hold MAX_SESSIONS_PER_TOKEN, the server
 * MAX_SESSIONS. At the cap the token's least recently used session with no request running
 * is ended to make room (an idle one first, else one holding only its stream); when every one
 * has a request running, `initialize` is 429 naming the cap. A POST without a session id
 * that is not an `initialize` is answered statelessly, as before sessions existed; GET and
 * DELETE without one are 405.
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
export const MAX_SESSIONS_PER_TOKEN = 32;
export const MAX_SESSIONS = 256;

interface Session {
  token: string;
  server: Server;
  transport: StreamableHTTPServerTransport;
  /** Serves `tools/call` as an SSE stream (progress, then the result): request-streams.ts. */
  calls: StreamedCalls;
  /** Requests in flight: a session with one is never reclaimed. */
  inflight: number;
  /** Open GET streams: a session with only these may be reclaimed at the cap (its stream ended). */
  streams: number;
  /** Order of last use (a counter, not a time: eviction needs the order only). */
  used: number;
}

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

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

  const sessions = new Map<string, Session>();
  let uses = 0;
  /** Runs a request or stream in the session, keeping it busy until its response closes. */
  const serve = async (s: Session, req: FastifyRequest, reply: FastifyReply, body?: unknown): Promise<void> => {
    s.used = ++uses;
    const kind = req.method === 'GET' ? 'streams' : 'inflight';
    s[kind]++;
    reply.raw.once('close', () => void s[kind]--);
    reply.hijack();
    if (body !== undefined && s.calls.serve(req.raw, reply.raw, body)) return;
    await s.transport.handleRequest(req.raw, reply.raw, body);
  };
  /**
   * At the cap, the token's least recently used session with no request in flight makes room
   * (its client gets 404 and may initialize again): an idle one first, else one holding only a
   * notification stream, which is ended. Clients that open a stream per session and never close
   * it (the conformance suite does) would otherwise fill the cap for good.
   */
  const reclaim = (token: string): boolean => {
    const candidates = [...sessions.entries()].filter(([, s]) => s.token === token && s.inflight === 0);
    const byUse = (a: [string, Session], b: [string, Session]): number => a[1].used - b[1].used;
    const idle = candidates.filter(([, s]) => s.streams === 0).sort(byUse)[0] ?? candidates.sort(byUse)[0];
    if (!idle) return false;
    sessions.delete(idle[0]);
    void idle[1].transport.close();
    void idle[1].server.close();
    return true;
  };
  const sessionOf = async (req: FastifyRequest, reply: FastifyReply, token: string): Promise<Session | null> => {
    const id = req.headers['mcp-session-id'];
    const s = typeof id === 'string' ? sessions.get(id) : undefined;
    if (s && s.token === token) return s;
    // Another token's session is answered as an unknown one: its existence is not told.
    await reply
      .code(404)
      .send(rpcError(-32001, 'session not found: it ended, or was opened with another token; initialize a new one'));
    return null;
  };

  const open = async (req: FastifyRequest, reply: FastifyReply, token: string): Promise<void> => {
    const mine = [...sessions.values()].filter((s) => s.token === token).length;
    if ((mine >= MAX_SESSIONS_PER_TOKEN || sessions.size >= MAX_SESSIONS) && mine > 0) reclaim(token);
    const now = [...sessions.values()].filter((s) => s.token === token).length;
    if (now >= MAX_SESSIONS_PER_TOKEN || sessions.size >= MAX_SESSIONS) {
      const which = now >= MAX_SESSIONS_PER_TOKEN ? `${MAX_SESSIONS_PER_TOKEN} per token` : `${MAX_SESSIONS} in all`;
      await reply
        .code(429)
        .send(
          rpcError(
            -32000,
            `RATE_LIMITED: too many open MCP sessions, all with a request in flight (at most ${which}); end one with DELETE /mcp and its Mcp-Session-Id`,
          ),
        );
      return;
    }
    const ctx = contextFor(token);
    const server = createMcpServer(() => ctx, { events: ctx.events });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) =>
        void sessions.set(id, { token, server, transport, calls, inflight: 0, streams: 0, used: ++uses }),
      onsessionclosed: (id) => {
        sessions.delete(id);
        void server.close();
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const calls = new StreamedCalls(transport);
    await server.connect(calls);
    reply.hijack();
    await transport.handleRequest(req.raw, reply.raw, req.body);
  };

  const stateless = async (req: FastifyRequest, reply: FastifyReply, token: string): Promise<void> => {
    const ctx = contextFor(token);
    const server = createMcpServer(() => ctx, { events: ctx.events });
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    const calls = new StreamedCalls(transport);
    reply.raw.on('close', () => {
      void calls.close();
      void server.close();
    });
    await server.connect(calls);
    reply.hijack();
    if (calls.serve(req.raw, reply.raw, req.body)) return;
    await transport.handleRequest(req.raw, reply.raw, req.body);
  };

  app.post(MCP_PATH, async (req, reply) => {
    const token = await guard(req, reply);
    if (token === null) return reply;
    if (req.headers['mcp-session-id'] !== undefined) {
      const s = await sessionOf(req, reply, token);
      if (!s) return reply;
      await serve(s, req, reply, req.body);
      return reply;
    }
    if (isInitializeRequest(req.body)) await open(req, reply, token);
    else await stateless(req, reply, token);
    return reply;
  });
  // GET opens a session's stream, DELETE ends it; without a session there is nothing to stream or end.
  const inSession = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const token = await guard(req, reply);
    if (token === null) return reply;
    if (req.headers['mcp-session-id'] === undefined) {
      return reply
        .code(405)
        .header('Allow', 'POST')
        .send(
          rpcError(
            -32000,
            "no Mcp-Session-Id: GET opens a session's stream and DELETE ends a session; initialize one with POST first",
          ),
        );
    }
    const s = await sessionOf(req, reply, token);
    if (!s) return reply;
    await serve(s, req, reply);
    return reply;
  };
  app.get(MCP_PATH, inSession);
  app.delete(MCP_PATH, inSession);
}

/** The MCP endpoint as an extension of the platform's API (`/mcp`, same bearer tokens). */
export const mcpApiExtension: ApiExtension = async (app, deps) => {
  await app.register(mcpHttpPlugin, { tokens: deps.tokens, clock: deps.clock, hosts: deps.hosts });
};
