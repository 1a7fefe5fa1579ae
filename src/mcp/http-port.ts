import type { FastifyInstance } from 'fastify';
import { cancelled } from './call.js';
import { toolError } from './errors.js';

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
  /** `signal`: the calling request's cancellation; an aborted request is not sent, or stops waiting. */
  post(path: string, body: unknown, bearer: string | null, signal?: AbortSignal): Promise<HttpAnswer>;
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
    async post(path, body, bearer, signal) {
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${baseUrl}${path}`, {
          method: 'POST',
          headers: headers(bearer),
          body: JSON.stringify(body),
          signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS),
        });
        text = await res.text();
      } catch (err) {
        // A cancelled call's request: its caller stops here, and says why (not a network fault).
        if (signal?.aborted) throw cancelled(signal);
        const reason =
          err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
        throw toolError('NETWORK_ERROR', `the platform API at ${baseUrl} did not answer ${path}: ${reason}`, {
          cause: err,
        });
      }
      return { status: res.status, body: parse(text), text };
    },
  };
}

/**
 * Calls routes of the app the `/mcp` route lives in, through Fastify's in-process injection.
 * An injected request cannot be aborted once running (it holds no socket); a cancelled call's
 * next one is never started.
 */
export function injectPort(app: FastifyInstance): HttpPort {
  return {
    async post(path, body, bearer, signal) {
      if (signal?.aborted) throw cancelled(signal);
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
