/**
 * IP addresses as numbers, parsed the way the network stack would read them, so a policy
 * check sees the address a connection would reach: every IPv4 form `inet_aton` accepts
 * (`127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1`), IPv6 with `::` and an embedded dotted
 * quad, brackets and a zone index. Pure: no DNS.
 */
export interface Ip {
  family: 4 | 6;
  /** 32 bits (IPv4) or 128 bits (IPv6). */
  value: bigint;
}

/** One inet_aton part: decimal, octal (leading 0) or hex (0x); null when malformed. */
function part(s: string): bigint | null {
  if (/^0[xX][0-9a-fA-F]*$/.test(s)) return s.length === 2 ? 0n : BigInt(s);
  if (/^0[0-7]*$/.test(s)) return s.length === 1 ? 0n : BigInt(`0o${s.slice(1)}`);
  if (/^[1-9][0-9]*$/.test(s)) return BigInt(s);
  return null;
}

/**
 * IPv4 in any inet_aton form: a.b.c.d, a.b.c (c is 16 bits), a.b (b is 24 bits), a (32 bits);
 * each part decimal, octal or hex. A trailing dot is accepted, as resolvers do.
 */
export function parseIpv4(input: string): Ip | null {
  const s = input.endsWith('.') ? input.slice(0, -1) : input;
  const parts = s.split('.');
  if (parts.length < 1 || parts.length > 4) return null;
  const nums = parts.map(part);
  if (nums.some((n) => n === null)) return null;
  const ns = nums as bigint[];
  const last = ns[ns.length - 1] as bigint;
  const lastBits = BigInt(8 * (5 - ns.length));
  if (last >= 1n << lastBits) return null;
  let value = 0n;
  for (let i = 0; i < ns.length - 1; i++) {
    const n = ns[i] as bigint;
    if (n > 255n) return null;
    value |= n << BigInt(8 * (3 - i));
  }
  return { family: 4, value: value | last };
}

/** Strict dotted quad (inside IPv6, where inet_aton's forms are not allowed). */
function dottedQuad(s: string): bigint | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return null;
  return octets.reduce((acc, o) => (acc << 8n) | BigInt(o), 0n);
}

/** IPv6, with optional brackets, zone index (`%eth0`) and a trailing dotted quad. */
export function parseIpv6(input: string): Ip | null {
  let s = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return null;
  // A trailing dotted quad is two groups written in decimal: rewrite it as hex groups.
  const lastColon = s.lastIndexOf(':');
  const maybeQuad = s.slice(lastColon + 1);
  if (maybeQuad.includes('.')) {
    const q = dottedQuad(maybeQuad);
    if (q === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(q >> 16n).toString(16)}:${(q & 0xffffn).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string): bigint[] | null => {
    if (h === '') return [];
    const gs = h.split(':');
    if (gs.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return null;
    return gs.map((g) => BigInt(`0x${g}`));
  };
  const head = groups(halves[0] as string);
  const rest = halves.length === 2 ? groups(halves[1] as string) : [];
  if (head === null || rest === null) return null;
  const total = head.length + rest.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return null;
  const all = [...head, ...Array<bigint>(8 - total).fill(0n), ...rest];
  return { family: 6, value: all.reduce((acc, g) => (acc << 16n) | g, 0n) };
}

/** Either family; a host name gives null. */
export function parseIp(input: string): Ip | null {
  return parseIpv6(input) ?? parseIpv4(input);
}

export function formatIp(ip: Ip): string {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((ip.value >> BigInt(16 * i)) & 0xffffn).toString(16));
  return groups.join(':');
}

/** A CIDR block: `10.0.0.0/8`, `::1/128`, or one address (a full-length prefix). */
export interface Cidr {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

export function parseCidr(input: string): Cidr | null {
  const slash = input.lastIndexOf('/');
  const addr = parseIp(slash < 0 ? input : input.slice(0, slash));
  if (!addr) return null;
  const width = addr.family === 4 ? 32 : 128;
  const bitsText = slash < 0 ? String(width) : input.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  const bits = Number(bitsText);
  if (bits > width) return null;
  return { family: addr.family, base: addr.value & mask(width, bits), bits };
}

function mask(width: number, bits: number): bigint {
  const all = (1n << BigInt(width)) - 1n;
  return bits === 0 ? 0n : all ^ ((1n << BigInt(width - bits)) - 1n);
}

export function inCidr(ip: Ip, c: Cidr): boolean {
  if (ip.family !== c.family) return false;
  return (ip.value & mask(ip.family === 4 ? 32 : 128, c.bits)) === c.base;
}
