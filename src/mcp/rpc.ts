import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, McpError, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

/**
 * Requests the server judges itself, before any SDK schema (server.ts, the fallback handler):
 * the SDK answers a malformed `params` with -32603 and a validation dump, where the spec's
 * code is -32602 (invalid params) with a message naming the field. One table maps methods to
 * these handlers; a method in none of them is -32601.
 */
export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
export type RawHandler = (params: unknown, extra: Extra) => Promise<Record<string, unknown>>;

export const invalidParams = (message: string): McpError => new McpError(ErrorCode.InvalidParams, message);

/** The params as the schema reads them, or -32602 naming what is wrong. */
export function paramsOf<S extends z.ZodType>(schema: S, params: unknown, method: string): z.infer<S> {
  const r = schema.safeParse(params ?? {});
  if (r.success) return r.data;
  throw invalidParams(
    `${method}: ${r.error.issues.map((i) => `${i.path.length > 0 ? `params.${i.path.join('.')}` : 'params'}: ${i.message}`).join('; ')}`,
  );
}
