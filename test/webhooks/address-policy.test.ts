import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileAllowProblem } from '../../src/scenario/resolve.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { AddressPolicy, checkUrl } from '../../src/webhooks/address-policy.js';
import type { AppError } from '../../src/core/errors.js';
import { isWebhookError } from '../../src/webhooks/errors.js';

/** URLs an attacker would try to make the platform call (SSRF), each refused by default. */
const SSRF_CORPUS = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://017700000001/',
  'http://0/',
  'http://0.0.0.0:8080/',
  'http://localhost/',
  'http://LOCALHOST./',
  'http://api.localhost/',
  'http://[::1]/',
  'http://[::]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.43518/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://100.100.100.200/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://10.0.0.1/',
  'http://172.16.5.4/',
  'http://192.168.1.1/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
];

function refusal(policy: AddressPolicy, url: string): AppError | null {
  try {
    checkUrl(policy, url, 'input[0].endpoint_config.url');
    return null;
  } catch (err) {
    if (isWebhookError(err)) return err;
    throw err;
  }
}

describe('webhook destination policy (SSRF)', () => {
  it.each(SSRF_CORPUS)('refuses %s with WEBHOOK_FORBIDDEN_ADDRESS by default', (url) => {
    const err = refusal(new AddressPolicy(), url);
    expect(err?.code).toBe('WEBHOOK_FORBIDDEN_ADDRESS');
    expect(err?.message).toMatch(/^input\[0\]\.endpoint_config\.url: /);
  });

  it('accepts public addresses and DNS names (a name is checked again at every connection)', () => {
    const p = new AddressPolicy();
    for (const url of [
      'https://hooks.example.com/occupancy',
      'http://8.8.8.8/',
      'http://[2606:4700::1111]/x',
      'https://93.184.216.34:8443/',
    ])
      expect(refusal(p, url), url).toBeNull();
    expect(checkUrl(p, 'https://hooks.example.com/x', 'u').literal).toBeNull();
  });

  it('lets the operator allow loopback, which also admits its IPv4-mapped form', () => {
    const p = new AddressPolicy(['127.0.0.1/8']);
    expect(refusal(p, 'http://127.0.0.1:9000/')).toBeNull();
    expect(refusal(p, 'http://localhost:9000/')).toBeNull();
    expect(refusal(p, 'http://[::ffff:127.0.0.1]/')).toBeNull();
    expect(refusal(p, 'http://[::1]/')?.code).toBe('WEBHOOK_FORBIDDEN_ADDRESS');
    expect(refusal(p, 'http://169.254.169.254/')?.code).toBe('WEBHOOK_FORBIDDEN_ADDRESS');
  });

  it('refuses what is not an http(s) URL or carries credentials with WEBHOOK_BAD_URL', () => {
    const p = new AddressPolicy();
    for (const url of [
      'not a url',
      'ftp://example.com/',
      'file:///etc/passwd',
      'gopher://example.com/',
      'https://user:pw@example.com/',
    ])
      expect(refusal(p, url)?.code, url).toBe('WEBHOOK_BAD_URL');
  });

  it('refuses an allow-list entry that is not an address or CIDR block, naming it', () => {
    expect(() => new AddressPolicy(['127.0.0.1/8', 'nope'])).toThrow(/webhookAllow\[1\]/);
    let err: unknown;
    try {
      new AddressPolicy(['10.0.0.0/40']);
    } catch (e) {
      err = e;
    }
    expect(isWebhookError(err, 'WEBHOOK_INVALID')).toBe(true);
  });
});

describe('an allow list that covers everything (issue 33 item 11)', () => {
  const quickstart = readFileSync(new URL('../../scenarios/quickstart.yaml', import.meta.url), 'utf8');
  const withAllow = (list: string): string => `${quickstart}\nwebhook_allow: ${list}\n`;

  it('is refused in a scenario file, at its entry, naming the command-line option', () => {
    for (const wide of ['0.0.0.0/0', '::/0', '0.0.0.0/1', '128.0.0.0/1', '::/1']) {
      const r = loadScenarioText(withAllow(`[127.0.0.1/8, "${wide}"]`), 'q.yaml');
      expect(r.ok, wide).toBe(false);
      const d = !r.ok ? r.diagnostics.find((x) => x.path.includes('webhook_allow')) : undefined;
      expect(d?.path, wide).toBe('webhook_allow[1]');
      expect(d?.message, wide).toMatch(
        /only the operator may switch it off — pass it on the command line \(occusim run\/serve --webhook-allow\)/,
      );
    }
  });

  it('private ranges stay allowed in a file, and the operator may still allow everything', () => {
    const r = loadScenarioText(withAllow('[127.0.0.1/8, 10.0.0.0/8, 192.168.0.0/16, "fc00::/7", "::1"]'), 'q.yaml');
    expect(r.ok && r.model.webhookAllow).toEqual(['127.0.0.1/8', '10.0.0.0/8', '192.168.0.0/16', 'fc00::/7', '::1']);
    expect(fileAllowProblem('10.0.0.0/8')).toBeNull();
    expect(fileAllowProblem('0.0.0.0/0')).toMatch(/allows every address/);
    expect(() => new AddressPolicy(['0.0.0.0/0', '::/0'])).not.toThrow();
  });
});
