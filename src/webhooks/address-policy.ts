import { ErrorCodes } from '../core/errors.js';
import { webhookError } from './errors.js';
import { formatIp, inCidr, parseCidr, parseIp, type Cidr, type Ip } from './ip.js';

/**
 * Which destinations a webhook may reach (SSRF): a URL is refused when its host is, or
 * resolves to, an address in a blocked range, unless the operator's allow list
 * (`--webhook-allow 127.0.0.1/8`, a scenario's `webhookAllow`) holds it. Checked when a
 * subscription is created or updated and again for every connection, on the addresses the
 * connection will use (a DNS name that later resolves inwards is refused then).
 */
const BLOCKED_TEXT: ReadonlyArray<readonly [string, string]> = [
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared address space (carrier NAT; cloud metadata of some providers)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata 169.254.169.254)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved and broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['100::/64', 'discard'],
  ['2001:db8::/32', 'documentation'],
  ['fc00::/7', 'unique local (private; cloud metadata fd00:ec2::254)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

const BLOCKED: ReadonlyArray<{ cidr: Cidr; why: string }> = BLOCKED_TEXT.map(([c, why]) => ({
  cidr: parseCidr(c) as Cidr,
  why,
}));

/** IPv6 forms that carry an IPv4 address the packet ends up at: mapped, compatible, NAT64. */
const EMBEDDING: readonly Cidr[] = ['::ffff:0:0/96', '::/96', '64:ff9b::/96', '64:ff9b:1::/48'].map(
  (c) => parseCidr(c) as Cidr,
);

/** The IPv4 address an IPv6 address embeds (mapped `::ffff:a.b.c.d` and the like), or null. */
export function embeddedIpv4(ip: Ip): Ip | null {
  if (ip.family !== 6) return null;
  if (!EMBEDDING.some((c) => inCidr(ip, c))) return null;
  return { family: 4, value: ip.value & 0xffffffffn };
}

export type AddressVerdict = { ok: true } | { ok: false; why: string };

export class AddressPolicy {
  readonly #allow: readonly Cidr[];

  /** `allow`: CIDR blocks (or single addresses) the operator lets webhooks reach. */
  constructor(allow: readonly string[] = []) {
    this.#allow = allow.map((text, i) => {
      const c = parseCidr(text.trim());
      if (!c)
        throw webhookError(
          ErrorCodes.WEBHOOK_INVALID,
          `webhookAllow[${i}]`,
          `${JSON.stringify(text)} is not an address or CIDR block`,
        );
      return c;
    });
    Object.freeze(this);
  }

  /** The operator's allow list as given (for the run summary). */
  get allowList(): readonly Cidr[] {
    return this.#allow;
  }

  /** Whether a connection may go to this address. */
  checkIp(ip: Ip): AddressVerdict {
    const v4 = embeddedIpv4(ip);
    const candidates = v4 ? [ip, v4] : [ip];
    // The operator's allow list names the address in either form: 127.0.0.1/8 also admits ::ffff:127.0.0.1.
    if (candidates.some((c) => this.#allow.some((a) => inCidr(c, a)))) return { ok: true };
    for (const c of candidates) {
      const hit = BLOCKED.find((b) => inCidr(c, b.cidr));
      if (hit) return { ok: false, why: `${formatIp(c)} is ${hit.why}` };
    }
    return { ok: true };
  }

  /** An address given as text (any IPv4 form, IPv6); a host name is not an address: null. */
  checkLiteral(host: string): AddressVerdict | null {
    const ip = parseIp(host);
    return ip ? this.checkIp(ip) : null;
  }
}

/** Names that always mean this machine or a metadata service, whatever DNS says. */
const LOCAL_NAMES =
  /^(localhost|localhost\.localdomain|ip6-localhost|ip6-loopback|metadata|metadata\.google\.internal|instance-data)\.?$|\.localhost\.?$/i;

export interface CheckedUrl {
  url: URL;
  /** The host as an address when it is one; null for a DNS name (checked at connection). */
  literal: Ip | null;
}

/**
 * Checks a destination URL's syntax and, when its host is an address, the address; a DNS name
 * is checked again on every connection (`guardedLookup`). Throws a located webhook error (errors.ts).
 */
export function checkUrl(policy: AddressPolicy, text: string, path: string): CheckedUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw webhookError(ErrorCodes.WEBHOOK_BAD_URL, path, `${JSON.stringify(text)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw webhookError(ErrorCodes.WEBHOOK_BAD_URL, path, `${url.protocol} is not http: or https:`);
  // Credentials in the URL would be sent to whoever answers: basic_auth is the place for them.
  if (url.username !== '' || url.password !== '')
    throw webhookError(ErrorCodes.WEBHOOK_BAD_URL, path, 'a URL with credentials (use endpoint_config.basic_auth)');
  // WHATWG URL parsing has already turned decimal, octal and hex IPv4 hosts into dotted quads.
  const host = url.hostname;
  const literal = parseIp(host);
  const verdict = literal
    ? policy.checkIp(literal)
    : LOCAL_NAMES.test(host)
      ? policy.checkIp(parseIp('127.0.0.1') as Ip)
      : { ok: true as const };
  if (!verdict.ok)
    throw webhookError(
      ErrorCodes.WEBHOOK_FORBIDDEN_ADDRESS,
      path,
      `${host} is refused: ${verdict.why} (allow it with --webhook-allow)`,
    );
  return { url, literal };
}
