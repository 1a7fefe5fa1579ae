import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  envelopeId,
  envelopeType,
  MAX_BODY_BYTES,
  NDJSON_FLUSH_MS,
  startReceiver,
} from '../../src/webhooks/receiver.js';
import { signedHeaders } from '../../src/webhooks/signing.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SEED = 20261125;
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('the receiver reading an envelope’s type', () => {
  it('reads the type at its place in the platform’s envelope, as JSON.parse would', () => {
    const body = JSON.stringify({
      id: 'event_0123abcd',
      type: 'ROOM_OCCUPANCY_1M',
      timestamp: 1,
      version: 'v1.0.0',
      metadata: { site_id: 'x' },
      data: 3,
    });
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
      '{"id":"event_1","type":"TRAFFIC","type":"DETECTIONS"}', // a duplicate key: JSON.parse keeps the last
      '{"id":"event_1","type":"TRAFFIC","\\u0074ype":"DETECTIONS"}', // the same, escaped
      '{"id":"event_1","type":"TRAFFIC","metadata":{"type":"x"}}', // a nested key named type (not told apart: parsed)
      'not json at all, but long enough',
      '',
    ];
    for (const text of others) expect(envelopeType(Buffer.from(text)), text).toBeNull();
  });
});

describe('the receiver’s type fast path against JSON.parse', () => {
  /** `{"id":…,"type":…` then further members (a duplicate `type`, spelt plainly or escaped, among them), as text. */
  const member = (k: string, v: unknown, escaped: boolean): string =>
    `${escaped ? JSON.stringify(k).replace(/t/g, '\\u0074') : JSON.stringify(k)}:${JSON.stringify(v)}`;
  const typeToken = fc.oneof(
    fc.constantFrom('ROOM_OCCUPANCY', 'DETECTIONS', 'FLOOR_OCCUPANCY_1M', 'TRAFFIC'),
    fc.stringMatching(/^[A-Z0-9_]{0,70}$/),
    fc.string({ unit: 'binary', maxLength: 12 }),
  );
  const envelope = fc
    .tuple(
      fc.oneof(fc.constant('event_0123abcd'), fc.string({ unit: 'binary', maxLength: 16 })),
      typeToken,
      fc.array(
        fc.tuple(
          fc.oneof(fc.constant('type'), fc.constantFrom('metadata', 'data', 'timestamp'), fc.string({ maxLength: 6 })),
          fc.jsonValue({ maxDepth: 2 }),
          fc.boolean(),
        ),
        { maxLength: 4 },
      ),
      fc.boolean(),
    )
    .map(([id, type, rest, nestType]) => {
      const more = rest.map(([k, v, esc]) => member(k, nestType && k === 'metadata' ? { type: 'x', v } : v, esc));
      return `{${[member('id', id, false), member('type', type, false), ...more].join(',')}}`;
    });

  it('answers what JSON.parse reads (or null) for any valid JSON, and takes the fast path on the platform’s layout', () => {
    console.log(`fast-check seed ${SEED}`);
    let fast = 0;
    fc.assert(
      fc.property(envelope, (text) => {
        const body = Buffer.from(text);
        const t = envelopeType(body);
        if (t === null) return;
        fast++;
        // What the receiver's fallback parses: the bytes as UTF-8 (a lone surrogate became U+FFFD).
        expect(t).toBe((JSON.parse(body.toString('utf8')) as { type: unknown }).type);
      }),
      { seed: SEED, numRuns: 2000 },
    );
    expect(fast).toBeGreaterThan(100); // not vacuous: the platform's layout is read in place
  });

  it('never throws on any bytes', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.string({ maxLength: 60 }).map((s) => Buffer.from(`{"id":"e","type":"${s}`)),
        ),
        (bytes) => {
          const t = envelopeType(Buffer.from(bytes));
          expect(t === null || /^[A-Z0-9_]{1,64}$/.test(t)).toBe(true);
        },
      ),
      { seed: SEED, numRuns: 1000 },
    );
  });
});

describe('the receiver’s id for a body sent without webhook-id', () => {
  const envelope = fc
    .tuple(
      fc.oneof(fc.constant('event_0123abcd'), fc.string({ unit: 'binary', maxLength: 16 })),
      fc.array(
        fc.tuple(
          fc.oneof(fc.constant('id'), fc.constantFrom('type', 'data'), fc.string({ maxLength: 4 })),
          fc.jsonValue({ maxDepth: 2 }),
          fc.boolean(),
        ),
        { maxLength: 4 },
      ),
    )
    .map(([id, rest]) => {
      const member = (k: string, v: unknown, escaped: boolean): string =>
        `${escaped ? JSON.stringify(k).replace(/d/g, '\\u0064') : JSON.stringify(k)}:${JSON.stringify(v)}`;
      return `{${[member('id', id, false), ...rest.map(([k, v, esc]) => member(k, v, esc))].join(',')}}`;
    });

  it('is JSON.parse’s string id (or null) for any valid JSON, read in place on the platform’s layout', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(
        fc.oneof(
          envelope,
          fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
        ),
        (text) => {
          const body = Buffer.from(text);
          const parsed = (JSON.parse(body.toString('utf8')) as { id?: unknown } | null)?.id;
          expect(envelopeId(body)).toBe(typeof parsed === 'string' ? parsed : null);
        },
      ),
      { seed: SEED, numRuns: 2000 },
    );
    expect(envelopeId(Buffer.from('not json'))).toBeNull();
  });
});

describe('occusim receive’s dedupe', () => {
  const post = async (client: Client, body: string, id?: string): Promise<number> => {
    const res = await client.request({
      method: 'POST',
      path: '/',
      body,
      headers: id === undefined ? {} : { 'webhook-id': id },
    });
    await res.body.dump();
    return res.statusCode;
  };

  it('dedupes a plain POST by its envelope’s id, and never drops a body with no id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-rx-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'plain.ndjson');
    const rx = await startReceiver({ port: 0, secrets: [], out });
    const client = new Client(`http://127.0.0.1:${rx.port}`);
    closers.push(
      () => rx.close(),
      () => client.close(),
    );
    const bodies = [
      '{"id":"event_1","type":"TRAFFIC"}',
      '{"id":"event_2","type":"TRAFFIC"}',
      '{"id":"event_1","type":"TRAFFIC"}',
      '{"type":"DETECTIONS"}',
      '{"type":"DETECTIONS"}',
      'plain text',
    ];
    for (const b of bodies) expect(await post(client, b)).toBe(200);
    expect(rx.stats()).toMatchObject({
      requests: 6,
      unique: 5,
      duplicates: 1,
      byType: { TRAFFIC: 2, DETECTIONS: 2, UNKNOWN: 1 },
    });
    await rx.close();
    expect(readFileSync(out, 'utf8')).toBe([0, 1, 3, 4, 5].map((i) => `${bodies[i]}\n`).join(''));
  });

  it('remembers at most dedupeIds ids, forgetting the oldest first', async () => {
    const rx = await startReceiver({ port: 0, secrets: [], out: null, dedupeIds: 2 });
    const client = new Client(`http://127.0.0.1:${rx.port}`);
    closers.push(
      () => rx.close(),
      () => client.close(),
    );
    for (const id of ['a', 'b', 'b', 'c', 'a', 'c']) expect(await post(client, '{}', id)).toBe(200);
    // a, b, (b dup), c forgets a, a is new again and forgets b, (c dup)
    expect(rx.stats()).toMatchObject({ unique: 4, duplicates: 2 });
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
    closers.push(
      () => signed.close(),
      () => plain.close(),
      () => client.close(),
      () => plainClient.close(),
    );
    const bodies = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({
        id: `event_${i}`,
        type: i % 2 ? 'TRAFFIC' : 'DETECTIONS',
        timestamp: i,
        version: 'v1.0.0',
        metadata: {},
        data: { é: i },
      }),
    );
    const statuses = await Promise.all(
      bodies.map(async (body, i) => {
        const res = await client.request({
          method: 'POST',
          path: '/',
          body,
          headers: { ...signedHeaders([SECRET], `event_${i}`, 1000, body) },
          idempotent: true,
          blocking: false,
        });
        await res.body.dump();
        return res.statusCode;
      }),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    const odd = await plainClient.request({
      method: 'POST',
      path: '/',
      body: '{"type":"TRAFFIC","id":"x"}',
      headers: { 'webhook-id': 'x' },
    });
    await odd.body.dump();
    expect(signed.stats().byType).toEqual({ DETECTIONS: 10, TRAFFIC: 10 });
    expect(plain.stats().byType).toEqual({ TRAFFIC: 1 });
    await signed.close();
    expect(readFileSync(signedOut, 'utf8')).toBe(bodies.map((b) => `${b}\n`).join(''));
  });

  it('writes the NDJSON of a running receiver within its flush interval, in arrival order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-rx-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'live.ndjson');
    const rx = await startReceiver({ port: 0, secrets: [SECRET], out });
    const client = new Client(`http://127.0.0.1:${rx.port}`);
    closers.push(
      () => rx.close(),
      () => client.close(),
    );
    const bodies = ['a', 'b', 'c'].map((k) => JSON.stringify({ id: `event_${k}`, type: 'TRAFFIC', data: k }));
    for (const [i, body] of bodies.entries()) {
      const res = await client.request({
        method: 'POST',
        path: '/',
        body,
        headers: { ...signedHeaders([SECRET], `event_${'abc'[i]}`, 1000, body) },
      });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
    }
    const deadline = Date.now() + 20 * NDJSON_FLUSH_MS; // wall time in a test only: the file is written on a timer
    let text = '';
    while (Date.now() < deadline && text !== bodies.map((b) => `${b}\n`).join('')) {
      await new Promise((r) => setTimeout(r, NDJSON_FLUSH_MS));
      text = readFileSync(out, 'utf8');
    }
    expect(text).toBe(bodies.map((b) => `${b}\n`).join(''));
  });

  it('answers 413 to a body over the limit without keeping it', async () => {
    const rx = await startReceiver({ port: 0, secrets: [], out: null });
    const client = new Client(`http://127.0.0.1:${rx.port}`);
    closers.push(
      () => rx.close(),
      () => client.close(),
    );
    const res = await client.request({
      method: 'POST',
      path: '/',
      body: Buffer.alloc(MAX_BODY_BYTES + 1, 0x20),
      headers: { 'webhook-id': 'big' },
    });
    await res.body.dump();
    expect(res.statusCode).toBe(413);
    expect(rx.stats()).toMatchObject({ requests: 0, unique: 0 });
  });
});

describe('receive --apply', () => {
  const T0 = Date.UTC(2026, 2, 2, 8, 0);
  const body = (id: string, value: number): string =>
    JSON.stringify({
      id,
      type: 'ROOM_OCCUPANCY_1M',
      timestamp: T0,
      version: 'v1.0.0',
      metadata: { room_id: 'room_a' },
      data: value,
    });
  const post = (url: string, id: string, seq: number, value: number): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'occusim-sequence': String(seq) },
      body: body(id, value),
    });

  it('answers the state its consumer holds at GET /state, and writes it at close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-apply-'));
    const stateOut = join(dir, 'state.ndjson');
    const rx = await startReceiver({ port: 0, secrets: [], out: null, apply: 'idempotent', stateOut });
    try {
      // The newer revision first, then the older one, then the newer one again (a retry).
      for (const [id, seq, value] of [
        ['e2', 2, 5],
        ['e1', 1, 4],
        ['e2', 2, 5],
      ] as const)
        expect((await post(rx.url, id, seq, value)).status).toBe(200);
      const res = await fetch(`${rx.url}state`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`{"type":"ROOM_OCCUPANCY_1M","subject":"room_a","minute":${T0},"value":5}\n`);
      expect(rx.stats()).toMatchObject({ unique: 2, duplicates: 1 });
    } finally {
      await rx.close();
    }
    expect(readFileSync(stateOut, 'utf8')).toBe(
      `{"type":"ROOM_OCCUPANCY_1M","subject":"room_a","minute":${T0},"value":5}\n`,
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a GET 404 without --apply, and counts it as no delivery', async () => {
    const rx = await startReceiver({ port: 0, secrets: [], out: null });
    try {
      expect((await fetch(`${rx.url}state`)).status).toBe(404);
      expect(rx.stats().requests).toBe(0);
    } finally {
      await rx.close();
    }
  });
});
