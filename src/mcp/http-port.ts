import type { FastifyInstance } from 'fastify';
import { ToolError } from './errors.js';

/**
 * How the tool server reaches the platform API: over the network (stdio server, `fetch`) or
 * inside the API's own process (the `/mcp` route, `inject`: the same routes, auth and
 * isolation without a socket). Only POST with a JSON body: every call the tools make is one.
 */
export interface HttpAnswer {
  status: number;
  body: unknown;
  text: string;
}

export interface HttpPort {
  post(path: string, body: unknown, bearer: string | null): Promise<HttpAnswer>;
}

const TIMEOUT_MS = 30_000;

function parse(text: string): unknown {
  try {
    return text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

const headers = (bearer: string | null): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json',
  ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
});

export function fetchPort(baseUrl: string): HttpPort {
  return {
    async post(path, body, bearer) {
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${baseUrl}${path}`, {
          method: 'POST',
          headers: headers(bearer),
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        text = await res.text();
      } catch (err) {
        const reason =
          err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
        throw new ToolError('NETWORK_ERROR', `the platform API at ${baseUrl} did not answer ${path}: ${reason}`, {
          cause: err,
        });
      }
      return { status: res.status, body: parse(text), text };
    },
  };
}

/** Calls routes of the app the `/mcp` route lives in, through Fastify's in-process injection. */
export function injectPort(app: FastifyInstance): HttpPort {
  return {
    async post(path, body, bearer) {
      const res = await app.inject({
        method: 'POST',
        url: path,
        headers: headers(bearer),
        payload: JSON.stringify(body),
      });
      return { status: res.statusCode, body: parse(res.body), text: res.body };
    },
  };
}
