import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { envelopeType, MAX_BODY_BYTES, startReceiver } from '../../src/webhooks/receiver.js';
import { signedHeaders } from '../../src/webhooks/signing.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('the receiver reading an envelope’s type', () => {
  it('reads the type at its place in the platform’s envelope, as JSON.parse would', () => {
    const body = JSON.stringify({ id: 'event_0123abcd', type: 'ROOM_OCCUPANCY_1M', timestamp: 1, version: 'v1.0.0', metadata: { type: 'x' }, data: 3 });
    expect(envelopeType(Buffer.from(body))).toBe('ROOM_OCCUPANCY_1M');
    expect(envelopeType(Buffer.from(body)) === (JSON.parse(body) as { type: string }).type).toBe(true);
  });

  it('leaves every other layout to JSON.parse (null)', () => {
    const others = [
      '{"type":"TRAFFIC","id":"event_1"}', // another key order
      '{"id":"ev\\"1","type":"TRAFFIC"}', // an escaped id
      '{"id":"event_1","type":"traffic"}', // not an upper-case token
      '{"id":"event_1","type":"TRAFFIC', // unterminated
      '{"id":"event_1","type":""}',
      '{"id":"event_1", "type":"TRAFFIC"}', // other spacing
      'not json at all, but long enough',
      '',
    ];
    for (const text of others) expect(envelopeType(Buffer.from(text)), text).toBeNull();
  });
});

describe('occusim receive’s endpoint', () => {
  it('counts a verified envelope by its type, an unsigned receiver’s by JSON.parse, and writes the received bytes as NDJSON lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-rx-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const signedOut = join(dir, 'signed.ndjson');
    const signed = await startReceiver({ port: 0, secrets: [SECRET], out: signedOut });
    const plain = await startReceiver({ port: 0, secrets: [], out: null });
    const client = new Client(`http://127.0.0.1:${signed.port}`, { pipelining: 8 });
    const plainClient = new Client(`http://127.0.0.1:${plain.port}`);
    closers.push(() => signed.close(), () => plain.close(), () => client.close(), () => plainClient.close());
    const bodies = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `event_${i}`, type: i % 2 ? 'TRAFFIC' : 'DETECTIONS', timestamp: i, version: 'v1.0.0', metadata: {}, data: { é: i } }));
    const statuses = await Promise.all(
      bodies.map(async (body, i) => {
        const res = await client.request({ method: 'POST', path: '/', body, headers: { ...signedHeaders([SECRET], `event_${i}`, 1000, body) }, idempotent: true, blocking: false });
        await res.body.dump();
        return res.statusCode;
      }),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    const odd = await plainClient.request({ method: 'POST', path: '/', body: '{"type":"TRAFFIC","id":"x"}', headers: { 'webhook-id': 'x' } });
    await odd.body.dump();
    expect(signed.stats().byType).toEqual({ DETECTIONS: 10, TRAFFIC: 10 });
    expect(plain.stats().byType).toEqual({ TRAFFIC: 1 });
    await signed.close();
    expect(readFileSync(signedOut, 'utf8')).toBe(bodies.map((b) => `${b}\n`).join(''));
  });

  it('answers 413 to a body over the limit without keeping it', async () => {
    const rx = await startReceiver({ port: 0, secrets: [], out: null });
    const client = new Client(`http://127.0.0.1:${rx.port}`);
    closers.push(() => rx.close(), () => client.close());
    const res = await client.request({ method: 'POST', path: '/', body: Buffer.alloc(MAX_BODY_BYTES + 1, 0x20), headers: { 'webhook-id': 'big' } });
    await res.body.dump();
    expect(res.statusCode).toBe(413);
    expect(rx.stats()).toMatchObject({ requests: 0, unique: 0 });
  });
});
