import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * Which `Host` and `Origin` the served API answers (issue 33, item 5; MCP transport spec,
 * DNS rebinding). A page on a foreign site can point its own name at 127.0.0.1 (DNS
 * rebinding): the browser then sends that name as `Host` and its site as `Origin`, and would
 * read whatever the API shows without a token. So every route checks both:
 *
 * - `Host` must name this server: `localhost`, `127.0.0.1`, `[::1]`, the address it listens
 *   on, or a name the operator passes (`--allowed-host`). Listening on every interface
 *   (`--host 0.0.0.0`), any IP literal is also accepted: devices reach the machine by its
 *   address, and a rebinding page cannot make a browser send an address as `Host`.
 * - `Origin`, when a browser sends one, must name one of those hosts too (a page of this
 *   server, or another loopback page); `Origin: null` (sandboxed frames, files) is refused.
 *
 * A request without `Host` or `Origin` is not a browser's (HTTP/1.1 browsers always send Host).
 */
export interface HostPolicy {
  hostAllowed(host: string | undefined): boolean;
  originAllowed(origin: string | undefined): boolean;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);
/** A DNS name (RFC 1123 labels) or an IP literal, as `--allowed-host` takes it. */
const NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** What an error message quotes of a header: a client's header is bounded in what we echo. */
const QUOTE_MAX = 100;

/** A bracketed IPv6 literal, or an IPv4 / name lower-cased without a trailing dot. */
function canonical(name: string): string {
  const n = name.trim().toLowerCase().replace(/\.$/, '');
  return isIP(n) === 6 ? `[${n}]` : n;
}

/** The host part of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`). */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(0, end + 1);
  }
  return canonical(h.replace(/:\d*$/, ''));
}

function isIpLiteral(name: string): boolean {
  return isIP(name) === 4 || (name.startsWith('[') && name.endsWith(']') && isIP(name.slice(1, -1)) === 6);
}

/** Checks one `--allowed-host` value; throws a USAGE error naming it. */
export function allowedHostName(value: string): string {
  const n = canonical(value);
  if (!NAME.test(n) && !isIpLiteral(n))
    throw new AppError(
      ErrorCodes.USAGE,
      `--allowed-host must be a host name or an IP address (no scheme, no port), got ${JSON.stringify(value.slice(0, QUOTE_MAX))}`,
    );
  return n;
}

/** The policy of a server listening on `listen`, with the operator's extra names. */
export function hostPolicy(listen: string, allowed: readonly string[] = []): HostPolicy {
  const wildcard = WILDCARDS.has(listen.trim());
  const names = new Set([...LOOPBACK_NAMES, ...(wildcard ? [] : [canonical(listen)]), ...allowed.map(canonical)]);
  const nameAllowed = (name: string): boolean => names.has(name) || (wildcard && isIpLiteral(name));
  return Object.freeze({
    hostAllowed: (host: string | undefined) => host === undefined || nameAllowed(hostName(host)),
    originAllowed: (origin: string | undefined) => {
      if (origin === undefined) return true;
      let url: URL;
      try {
        url = new URL(origin);
      } catch {
        return false;
      }
      return (url.protocol === 'http:' || url.protocol === 'https:') && nameAllowed(canonical(url.hostname));
    },
  });
}

/** The policy of an app that is not listening (tests' `inject`, whose Host is `localhost:80`). */
export const LOOPBACK_ONLY: HostPolicy = hostPolicy('127.0.0.1');

const quote = (v: string): string => JSON.stringify(v.length > QUOTE_MAX ? `${v.slice(0, QUOTE_MAX)}…` : v);

/** Refuses, before any route runs, a request whose Host or Origin the policy does not allow (403 FORBIDDEN). */
export function registerHostGuard(app: FastifyInstance, policy: HostPolicy): void {
  app.addHook('onRequest', async (req, reply) => {
    const { host, origin } = req.headers;
    if (!policy.hostAllowed(host)) {
      return reply.code(403).send({
        code: 'FORBIDDEN',
        message: `host ${quote(host ?? '')} is not served here (allowed: this server's address, localhost, or a name given with --allowed-host)`,
      });
    }
    if (!policy.originAllowed(origin)) {
      return reply.code(403).send({ code: 'FORBIDDEN', message: `origin ${quote(origin ?? '')} is not allowed` });
    }
    return undefined;
  });
}
