import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWebhookError } from '../../src/webhooks/errors.js';
import { secretFromKey, secretKey, sign, signedHeaders, verify } from '../../src/webhooks/signing.js';

interface Vector {
  secret: string;
  id: string;
  timestamp: number;
  payload: string;
  signature: string;
}
const { vectors } = JSON.parse(readFileSync(new URL('./vectors/standard-webhooks.json', import.meta.url), 'utf8')) as {
  vectors: Vector[];
};
const SEED = 20261124;

describe('Standard Webhooks signatures', () => {
  it.each(vectors)('reproduces the published signature of $id exactly', (v) => {
    expect(sign(v.secret, v.id, v.timestamp, v.payload)).toBe(v.signature);
    expect(sign(v.secret, v.id, v.timestamp, Buffer.from(v.payload))).toBe(v.signature);
  });

  it.each(vectors)('verifies the published delivery $id and refuses it once tampered with', (v) => {
    const headers = { 'webhook-id': v.id, 'webhook-timestamp': String(v.timestamp), 'webhook-signature': v.signature };
    expect(verify([v.secret], headers, v.payload, v.timestamp)).toEqual({ ok: true });
    expect(verify([v.secret], headers, v.payload.replace('2', '3'), v.timestamp)).toEqual({
      ok: false,
      reason: 'no-match',
    });
    expect(verify([v.secret], { ...headers, 'webhook-id': 'msg_other' }, v.payload, v.timestamp)).toEqual({
      ok: false,
      reason: 'no-match',
    });
  });

  it.each(vectors)('accepts a rotation header where any of the space-separated signatures verifies', (v) => {
    const headers = {
      'webhook-id': v.id,
      'webhook-timestamp': String(v.timestamp),
      'webhook-signature': `v1,bm9wZQ== v1a,xyz ${v.signature}`,
    };
    expect(verify([v.secret], headers, v.payload, v.timestamp)).toEqual({ ok: true });
  });

  it.each(vectors)(
    'compares $id by decoded length as Buffer.from did: unpadded accepted, any extra or missing byte refused',
    (v) => {
      const headers = (sig: string) => ({
        'webhook-id': v.id,
        'webhook-timestamp': String(v.timestamp),
        'webhook-signature': sig,
      });
      const b64 = v.signature.slice(3);
      expect(verify([v.secret], headers(`v1,${b64.replace(/=+$/, '')}`), v.payload, v.timestamp)).toEqual({ ok: true });
      const longer = Buffer.concat([Buffer.from(b64, 'base64'), Buffer.from([0])]).toString('base64');
      expect(verify([v.secret], headers(`v1,${longer}`), v.payload, v.timestamp)).toEqual({
        ok: false,
        reason: 'no-match',
      });
      expect(verify([v.secret], headers(`v1,${longer.replace(/=+$/, '')}`), v.payload, v.timestamp)).toEqual({
        ok: false,
        reason: 'no-match',
      });
      expect(
        verify(
          [v.secret],
          headers(`v1,${Buffer.from(b64, 'base64').subarray(0, 31).toString('base64')}`),
          v.payload,
          v.timestamp,
        ),
      ).toEqual({ ok: false, reason: 'no-match' });
      expect(verify([v.secret], headers(`v1,${b64.slice(0, 40)}!!!=`), v.payload, v.timestamp)).toEqual({
        ok: false,
        reason: 'no-match',
      });
      expect(verify([v.secret], headers(`v1a,${b64}`), v.payload, v.timestamp)).toEqual({
        ok: false,
        reason: 'no-match',
      });
      expect(verify([v.secret], headers(` ${v.signature}  `), v.payload, v.timestamp)).toEqual({ ok: true });
    },
  );

  it('refuses a timestamp outside the tolerance in either direction', () => {
    const v = vectors[0] as Vector;
    const headers = { 'webhook-id': v.id, 'webhook-timestamp': String(v.timestamp), 'webhook-signature': v.signature };
    expect(verify([v.secret], headers, v.payload, v.timestamp + 301)).toEqual({ ok: false, reason: 'too-old' });
    expect(verify([v.secret], headers, v.payload, v.timestamp - 301)).toEqual({ ok: false, reason: 'too-new' });
    expect(verify([v.secret], { ...headers, 'webhook-timestamp': '16e8' }, v.payload, v.timestamp)).toEqual({
      ok: false,
      reason: 'bad-timestamp',
    });
    expect(verify([v.secret], { 'webhook-id': v.id }, v.payload, v.timestamp)).toEqual({
      ok: false,
      reason: 'missing-headers',
    });
  });

  it('signs with every secret during a rotation, and each secret alone verifies', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        fc.string(),
        fc.nat({ max: 2 ** 33 }),
        (k1, k2, body, ts) => {
          const [s1, s2] = [secretFromKey(k1), secretFromKey(k2)];
          const h = signedHeaders([s1, s2], 'event_abc', ts, body);
          expect(h['webhook-signature'].split(' ')).toHaveLength(2);
          expect(verify([s2], h, body, ts).ok).toBe(true);
          expect(verify([s1], h, body, ts).ok).toBe(true);
          const other = secretFromKey(k1.map((b) => b ^ 1));
          expect(verify([other], h, body, ts).ok).toBe(false);
          // A receiver holding several secrets accepts with any of them, and only then.
          expect(verify([other, s2], { ...h, 'webhook-signature': sign(s2, 'event_abc', ts, body) }, body, ts).ok).toBe(
            true,
          );
          expect(verify([other, secretFromKey(k2.map((b) => b ^ 1))], h, body, ts).ok).toBe(false);
        },
      ),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('signs every message exactly as createHmac does (text of any code points, bytes, and bodies over the one-shot limit)', () => {
    console.log(`fast-check seed ${SEED}`);
    const reference = (key: Uint8Array, id: string, ts: number, body: string | Uint8Array): string =>
      `v1,${createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest('base64')}`;
    const body = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 700 }),
      fc.uint8Array({ maxLength: 700 }),
      fc.constant('x'.repeat(70_000)),
      fc.constant(new Uint8Array(66_000).fill(7)),
      fc.constant('lone \ud800 surrogate'),
    );
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.nat({ max: 2 ** 33 }),
        body,
        (key, id, ts, b) => {
          const secret = secretFromKey(key);
          const signature = sign(secret, id, ts, b);
          expect(signature).toBe(reference(key, id, ts, b));
          expect(
            verify(
              [secret],
              {
                'webhook-id': id || 'x',
                'webhook-timestamp': String(ts),
                'webhook-signature': sign(secret, id || 'x', ts, b),
              },
              b,
              ts,
            ).ok,
          ).toBe(true);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('refuses secrets without the whsec_ prefix, with bad base64 or with a short key, naming the place', () => {
    for (const bad of ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_not base64!', 'whsec_c2hvcnQ=']) {
      let err: unknown;
      try {
        secretKey(bad, 'webhooks[0].secret');
      } catch (e) {
        err = e;
      }
      expect(isWebhookError(err, 'WEBHOOK_BAD_SECRET')).toBe(true);
      expect((err as Error).message).toMatch(/^webhooks\[0\]\.secret: /);
    }
  });
});
