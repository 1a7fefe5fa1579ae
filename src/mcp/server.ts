import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { applyAliases } from './aliases.js';
import { NO_CALL, callOf, type Call } from './call.js';
import { systemClock, type Clock } from '../core/clock.js';
import { asToolError, invalid, type ToolError } from './errors.js';
import { atLeast, DEFAULT_LEVEL, LEVELS, type EventLog, type Level } from './events.js';
import { completionHandlers } from './completion.js';
import { promptHandlers } from './prompts.js';
import { resolveUri, resourceHandlers } from './resources.js';
import { invalidParams, paramsOf, type RawHandler } from './rpc.js';
import type { Subscriber } from './watch.js';
import { capText } from './render.js';
import type { AnyTool, ToolContext } from './tool.js';
import { TOOLS } from './tools/index.js';

/**
 * The MCP server: the ten `service_*` tools over any transport (stdio for `occusim-mcp`,
 * Streamable HTTP for `/mcp`, in-memory in tests). Built on the SDK's low-level `Server` so
 * that input validation, error mapping and the text rendering are ours: an unknown key is a
 * VALIDATION_FAILED tool result, like every other failure, never a protocol error.
 */
export const SERVER_INFO = { name: 'occusim-mcp', version: '0.1.0' } as const;

type JsonSchemaObject = Tool['inputSchema'];

const CALL_TOOL = CallToolRequestSchema.shape.method.value;
/** Longer than any tool's name (`service_*`, under 40): a longer one is refused without being echoed. */
export const MAX_TOOL_NAME = 64;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchemaObject {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: 'draft-7', io }) as Record<string, unknown>;
  return rest as JsonSchemaObject;
}

/**
 * A tool's input schema with the reference server's names listed beside ours (aliases.ts).
 * An argument that can come under an alias leaves `required`: the call needs one of the two,
 * which the description says and the server checks.
 */
function inputSchema(t: AnyTool): JsonSchemaObject {
  const schema = jsonSchema(t.input, 'input');
  const groups = t.aliases ?? [];
  if (groups.length === 0) return schema;
  const properties = { ...(schema.properties ?? {}) } as Record<string, Record<string, unknown>>;
  for (const g of groups) {
    for (const [name, zs] of Object.entries(g.from)) {
      const own = jsonSchema(zs, 'input') as Record<string, unknown>;
      const what = g.to === null ? 'accepted for compatibility' : `an alias of ${g.to}; give one of the two`;
      properties[name] = {
        ...own,
        description: `The reference server's name (${what})${typeof own.description === 'string' ? `: ${own.description}` : ''}`,
      };
    }
  }
  const aliased = new Set(groups.map((g) => g.to));
  const required = (schema.required ?? []).filter((r) => !aliased.has(r));
  const out: JsonSchemaObject = { ...schema, properties };
  if (required.length > 0) out.required = required;
  else delete out.required;
  return out;
}

/** The tools as `tools/list` publishes them (also snapshotted by the tests). */
export function toolList(tools: readonly AnyTool[] = TOOLS): Tool[] {
  return tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputSchema(t),
    outputSchema: jsonSchema(t.output, 'output'),
    annotations: {
      title: t.title,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  }));
}

export function errorResult(err: ToolError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${err.code}: ${err.message}` }], _meta: { code: err.code } };
}

function zodMessage(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : 'arguments'}: ${i.message}`).join('; ');
}

export async function callTool(
  tool: AnyTool,
  args: unknown,
  ctx: () => ToolContext,
  call: Call = NO_CALL,
): Promise<CallToolResult> {
  try {
    const given = await applyAliases(tool, (args ?? {}) as Record<string, unknown>, ctx);
    const parsed = tool.input.safeParse(given);
    if (!parsed.success) throw invalid(`${tool.name}: ${zodMessage(parsed.error)}`);
    const context = ctx();
    context.scope.next();
    const result = (await tool.run(parsed.data, context, call)) as Record<string, unknown>;
    return { structuredContent: result, content: [{ type: 'text', text: capText(tool.render(result)) }] };
  } catch (err) {
    return errorResult(asToolError(err));
  }
}

export interface McpServerOptions {
  /** The server's own events, forwarded as `notifications/message` (events.ts). */
  events?: EventLog;
  tools?: readonly AnyTool[];
}

/**
 * `logging/setLevel` and `notifications/message` (issue 28, item 4): each server (one per
 * session) forwards the events at or above its client's level, `info` until the client sets
 * one. A notification that cannot be sent (no stream open) is dropped: logs are not queued.
 */
function forwardEvents(server: Server, events: EventLog): Record<string, RawHandler> {
  let level: Level = DEFAULT_LEVEL;
  const off = events.on((e) => {
    if (!server.transport) return off();
    if (atLeast(e.level, level))
      server.sendLoggingMessage({ level: e.level, logger: e.logger, data: e.message }).catch(() => undefined);
  });
  const setLevel = z.object({ level: z.enum(LEVELS) });
  return {
    'logging/setLevel': async (params) => {
      level = paramsOf(setLevel, params, 'logging/setLevel').level;
      return {};
    },
  };
}

/**
 * `resources/subscribe` and `unsubscribe` for this server's session (watch.ts does the
 * watching). The session is attached to its organisation's watcher once initialised, so it
 * hears catalogue changes; a stateless HTTP exchange (no session, no stream) never is.
 */
function subscriptions(server: Server, context: () => ToolContext): Record<string, RawHandler> {
  const me: Subscriber = {
    updated: (uri) => void server.sendResourceUpdated({ uri }).catch(() => undefined),
    listChanged: () => void server.sendResourceListChanged().catch(() => undefined),
  };
  let detach: (() => void) | null = null;
  const attach = (): void => {
    if (detach) return;
    try {
      detach = context().watch.attach(me);
    } catch {
      // No context (bad settings): nothing to watch; requests answer the settings error.
    }
  };
  const prevInit = server.oninitialized;
  server.oninitialized = () => (prevInit?.(), attach());
  const prevClose = server.onclose;
  server.onclose = () => {
    detach?.();
    detach = null;
    prevClose?.();
  };
  const uriParams = z.object({ uri: z.string().min(1).max(2000) });
  return {
    'resources/subscribe': async (params) => {
      const { uri } = paramsOf(uriParams, params, 'resources/subscribe');
      const ctx = context();
      const { asset } = await resolveUri(ctx, uri);
      attach();
      try {
        ctx.watch.subscribe(me, uri, asset);
      } catch (err) {
        throw invalidParams(`resources/subscribe: ${err instanceof Error ? err.message : String(err)}`);
      }
      return {};
    },
    'resources/unsubscribe': async (params) => {
      const { uri } = paramsOf(uriParams, params, 'resources/unsubscribe');
      context().watch.unsubscribe(me, uri);
      return {};
    },
  };
}

/** The context's clock (progress pacing), or the system's when the context cannot be built (bad settings). */
function clockOf(context: () => ToolContext): Clock {
  try {
    return context().clock;
  } catch {
    return systemClock;
  }
}

/**
 * `context` is called per tool call: the stdio server hands out one long-lived context, the
 * HTTP route one per caller's organisation.
 */
export function createMcpServer(context: () => ToolContext, opts: McpServerOptions = {}): Server {
  const tools = opts.tools ?? TOOLS;
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: {},
      resources: { subscribe: true, listChanged: true },
      prompts: {},
      completions: {},
      ...(opts.events ? { logging: {} } : {}),
    },
    instructions:
      'Read-only tools over an occusim platform: assets (sites, buildings, floors, rooms, zones, hives, sensors), device health, and occupancy. ' +
      'Find ids with service_search_assets or service_list_topology first; errors come back as results with a code.',
  });
  const list = toolList(tools);
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list }));
  // tools/call is taken before the SDK's schema (the fallback sees the raw request): its
  // refusal of `arguments: null` or `[]` is a protocol error with a validation dump, where the
  // assistant should get a VALIDATION_FAILED result it can act on.
  const callRaw: RawHandler = async (params, extra) => {
    // A malformed progress token is a protocol error (-32602), before the tool is looked at.
    const call = callOf(extra, clockOf(context), CALL_TOOL);
    const { name, arguments: args } = (params ?? {}) as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string') return errorResult(invalid('params.name must be the name of a tool (a string)'));
    if (name.length > MAX_TOOL_NAME)
      return errorResult(
        invalid(
          `unknown tool (its name has ${name.length} characters; tool names have at most ${MAX_TOOL_NAME}); tools: ${[...byName.keys()].join(', ')}`,
        ),
      );
    const tool = byName.get(name);
    if (!tool)
      return errorResult(invalid(`unknown tool ${JSON.stringify(name)}; tools: ${[...byName.keys()].join(', ')}`));
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      return errorResult(
        invalid(
          `${name}: arguments must be an object (got ${args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args})`,
        ),
      );
    }
    return callTool(tool, args, context, call);
  };
  const raw: Record<string, RawHandler> = {
    [CALL_TOOL]: callRaw,
    ...resourceHandlers(context),
    ...subscriptions(server, context),
    ...promptHandlers(context),
    ...completionHandlers(context),
    ...(opts.events ? forwardEvents(server, opts.events) : {}),
  };
  // The SDK registers its own logging/setLevel, which answers a bad level with -32603: ours is -32602.
  server.removeRequestHandler('logging/setLevel');
  server.fallbackRequestHandler = async (req, extra) => {
    const handler = Object.hasOwn(raw, req.method) ? raw[req.method] : undefined;
    if (!handler)
      throw new McpError(ErrorCode.MethodNotFound, `method not found: ${req.method.slice(0, MAX_TOOL_NAME)}`);
    return handler(req.params, extra);
  };
  return server;
}
