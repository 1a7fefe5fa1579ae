import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIp, inCidr, parseCidr, parseIp, parseIpv4, parseIpv6 } from '../../src/webhooks/ip.js';

const SEED = 1724;
const v4 = (s: string): string | null => {
  const ip = parseIpv4(s);
  return ip ? formatIp(ip) : null;
};

describe('IP address parsing', () => {
  it('reads every inet_aton form of an IPv4 address as the stack would', () => {
    expect(v4('127.0.0.1')).toBe('127.0.0.1');
    expect(v4('2130706433')).toBe('127.0.0.1');
    expect(v4('0x7f000001')).toBe('127.0.0.1');
    expect(v4('017700000001')).toBe('127.0.0.1');
    expect(v4('0177.0.0.1')).toBe('127.0.0.1');
    expect(v4('0x7f.0.0.1')).toBe('127.0.0.1');
    expect(v4('127.1')).toBe('127.0.0.1');
    expect(v4('127.0.1')).toBe('127.0.0.1');
    expect(v4('169.254.43518')).toBe('169.254.169.254');
    expect(v4('10.0.0.1.')).toBe('10.0.0.1');
  });

  it('refuses what is not an IPv4 address', () => {
    for (const s of ['256.0.0.1', '1.2.3.4.5', '08.0.0.1', '1.2.3.256', '4294967296', 'example.com', '', '1..2']) {
      expect(v4(s), s).toBeNull();
    }
  });

  it('reads IPv6 with ::, brackets, zone index and an embedded dotted quad', () => {
    const hex = (s: string): string | null => {
      const ip = parseIpv6(s);
      return ip ? ip.value.toString(16) : null;
    };
    expect(hex('::1')).toBe('1');
    expect(hex('[::1]')).toBe('1');
    expect(hex('fe80::1%eth0')).toBe('fe800000000000000000000000000001');
    expect(hex('::ffff:127.0.0.1')).toBe('ffff7f000001');
    expect(hex('::ffff:7f00:1')).toBe('ffff7f000001');
    expect(hex('0:0:0:0:0:ffff:127.0.0.1')).toBe('ffff7f000001');
    expect(hex('1:2:3:4:5:6:7:8')).toBe('10002000300040005000600070008');
    for (const bad of ['1:2:3:4:5:6:7:8:9', '1::2::3', ':::', '::ffff:1.2.3', '12345::', 'g::1', '1:2:3:4:5:6:7'])
      expect(hex(bad), bad).toBeNull();
  });

  it('round-trips every IPv4 and IPv6 address through formatting', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(fc.ipV4(), (s) => formatIp(parseIp(s) as NonNullable<ReturnType<typeof parseIp>>) === s),
      { seed: SEED, numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.ipV6(), (s) => {
        const ip = parseIp(s);
        return ip !== null && parseIp(formatIp(ip))?.value === ip.value;
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('matches CIDR blocks by prefix and never across families', () => {
    const c = parseCidr('10.1.0.0/16');
    expect(c).not.toBeNull();
    expect(inCidr(parseIp('10.1.255.3')!, c!)).toBe(true);
    expect(inCidr(parseIp('10.2.0.1')!, c!)).toBe(false);
    expect(inCidr(parseIp('::ffff:10.1.0.1')!, c!)).toBe(false);
    expect(parseCidr('10.0.0.0/33')).toBeNull();
    expect(parseCidr('::/0')).toEqual({ family: 6, base: 0n, bits: 0 });
    expect(parseCidr('127.0.0.1')).toEqual({ family: 4, base: 0x7f000001n, bits: 32 });
  });
});
