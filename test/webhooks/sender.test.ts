import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../src/webhooks/address-policy.js';
import { createServer as createNetServer, type Socket } from 'node:net';
import { buildConnector, Client } from 'undici';
import { authHeaders, guardedLookup, Sender, writesPerTurn } from '../../src/webhooks/sender.js';
import { validateCreate, type Subscription } from '../../src/webhooks/subscription.js';
import { startTestReceiver, type TestReceiver } from './receiver-fixture.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
/** A resolver that answers every name with these addresses (DNS of an attacker's domain). */
const resolvesTo = (...addresses: string[]) =>
  ((_host: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
    cb(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )) as unknown as typeof dnsLookup;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

function subscriptionTo(url: string, policy: AddressPolicy): Subscription {
  return validateCreate(
    policy,
    'org_1',
    'webhook_1',
    {
      eventTypes: ['TRAFFIC'],
      url,
      basicAuth: { username: 'u', password: 'p' },
      apiKey: { key: 'X-Api-Key', value: 'k' },
    },
    SECRET,
    'input[0]',
  );
}

describe('webhook HTTP sender', () => {
  it('refuses a DNS name at connection time when any of its addresses is refused', async () => {
    const lookup = guardedLookup(new AddressPolicy(), resolvesTo('93.184.216.34', '169.254.169.254'));
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookup('hooks.evil.test', {}, (e) => resolve(e)),
    );
    expect(err?.code).toBe('WEBHOOK_FORBIDDEN_ADDRESS');
    expect(err?.message).toMatch(/169\.254\.169\.254/);
    const good = guardedLookup(new AddressPolicy(), resolvesTo('93.184.216.34'));
    const ok = await new Promise<unknown>((resolve) => good('hooks.good.test', {}, (e, a) => resolve(e ?? a)));
    expect(ok).toBe('93.184.216.34');
  });

  it('turns a name that resolves to loopback into a permanent failure, never a request', async () => {
    const receiver: TestReceiver = await startTestReceiver();
    closers.push(() => receiver.close());
    const policy = new AddressPolicy();
    const sender = new Sender({ policy, concurrency: 2, lookup: resolvesTo('127.0.0.1') });
    closers.push(() => sender.close());
    const s = subscriptionTo(`http://rebind.test:${receiver.port}/hook`, policy);
    const outcome = await sender.send({ subscription: s, body: '{}', headers: {}, nowMs: 0 });
    expect(outcome.kind).toBe('permanent');
    expect(receiver.received).toHaveLength(0);
  });

  it('sends api_key and basic_auth headers and reads the answer', async () => {
    const receiver = await startTestReceiver();
    closers.push(() => receiver.close());
    const policy = new AddressPolicy(['127.0.0.1/8']);
    const sender = new Sender({ policy, concurrency: 2 });
    closers.push(() => sender.close());
    const s = subscriptionTo(receiver.url, policy);
    expect(authHeaders(s)).toEqual({
      'X-Api-Key': 'k',
      authorization: `Basic ${Buffer.from('u:p').toString('base64')}`,
    });
    expect(
      await sender.send({
        subscription: s,
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
        nowMs: 0,
      }),
    ).toEqual({ kind: 'delivered', status: 204 });
    expect(receiver.received[0]?.headers).toMatchObject({ 'x-api-key': 'k', authorization: 'Basic dTpw' });
    receiver.respond = () => ({ status: 302, headers: { location: 'http://169.254.169.254/' } });
    expect(await sender.send({ subscription: s, body: '{}', headers: {}, nowMs: 0 })).toEqual({
      kind: 'permanent',
      reason: 'HTTP 302',
    });
  });

  it('reports a refused connection and a timeout as retryable', async () => {
    const receiver = await startTestReceiver();
    const policy = new AddressPolicy(['127.0.0.1/8']);
    const sender = new Sender({ policy, concurrency: 1 });
    closers.push(() => sender.close());
    const s = { ...subscriptionTo(receiver.url, policy) };
    s.endpoint = { ...s.endpoint, httpTimeoutMs: 200 };
    await receiver.down();
    expect((await sender.send({ subscription: s, body: '{}', headers: {}, nowMs: 0 })).kind).toBe('retryable');
    await receiver.up();
    closers.push(() => receiver.close());
    receiver.respond = () => ({ status: 200 });
    const slow = await startTestReceiver();
    closers.push(() => slow.close());
    slow.respond = () => ({ status: 200, delayMs: 3000 });
    const t = { ...s, endpoint: { ...s.endpoint, url: slow.url } };
    // A 200 ms http_timeout fires near 200 ms, not on undici's ~500 ms timer ticks.
    const started = performance.now();
    const timedOut = await sender.send({ subscription: t, body: '{}', headers: {}, nowMs: 0 });
    expect(timedOut.kind).toBe('retryable');
    expect(timedOut.kind === 'retryable' && timedOut.reason).toMatch(/WEBHOOK_TIMEOUT/);
    expect(performance.now() - started).toBeLessThan(2500);
  });
});

describe('per-endpoint concurrency limit', () => {
  /** An endpoint that holds every request 30 ms and records how many were held at once, per path. */
  async function holdingEndpoint(): Promise<{ port: number; most: Map<string, number>; close: () => Promise<void> }> {
    const { createServer } = await import('node:http');
    const held = new Map<string, number>();
    const most = new Map<string, number>();
    const server = createServer((req, res) => {
      const path = req.url ?? '';
      held.set(path, (held.get(path) ?? 0) + 1);
      most.set(path, Math.max(most.get(path) ?? 0, held.get(path) ?? 0));
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          held.set(path, (held.get(path) ?? 1) - 1);
          res.writeHead(204).end();
        }, 30),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as { port: number }).port;
    return {
      port,
      most,
      close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
    };
  }

  it('keeps at most a subscription’s own limit in flight, and the default for the others', async () => {
    const endpoint = await holdingEndpoint();
    closers.push(endpoint.close);
    const policy = new AddressPolicy(['127.0.0.1/8']);
    const own = { ...subscriptionTo(`http://127.0.0.1:${endpoint.port}/own`, policy), id: 'webhook_own' };
    const other = { ...subscriptionTo(`http://127.0.0.1:${endpoint.port}/other`, policy), id: 'webhook_other' };
    const sender = new Sender({
      policy,
      concurrency: 2,
      concurrencyOf: (id) => (id === 'webhook_own' ? 5 : undefined),
    });
    closers.push(() => sender.close());
    const send = (s: Subscription): Promise<unknown> =>
      sender.send({ subscription: s, body: '{}', headers: {}, nowMs: 0 });
    const outcomes = await Promise.all([
      ...Array.from({ length: 12 }, () => send(own)),
      ...Array.from({ length: 12 }, () => send(other)),
    ]);
    expect(outcomes.every((o) => (o as { kind: string }).kind === 'delivered')).toBe(true);
    // Two limits to one origin are two connections, each pipelined as deep as its limit.
    expect(endpoint.most.get('/own')).toBe(5);
    expect(endpoint.most.get('/other')).toBe(2);
  });
});

describe('writes of a turn', () => {
  /** Eight pipelined POSTs dispatched in one turn to an endpoint that never answers: how many socket writes carried them. */
  async function writesForEight(connector: (c: buildConnector.connector) => buildConnector.connector): Promise<number> {
    const server = createNetServer((socket) => socket.resume());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as { port: number }).port;
    let writes = 0;
    const counted: buildConnector.connector = (options, callback) =>
      connector(buildConnector({}))(options, (...args) => {
        const socket = args[1] as
          (Socket & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void }) | null;
        if (socket) {
          const [one, many] = [socket._write.bind(socket), socket._writev.bind(socket)];
          socket._write = (...a: unknown[]) => (writes++, one(...a));
          socket._writev = (...a: unknown[]) => (writes++, many(...a));
        }
        callback(...args);
      });
    const client = new Client(`http://127.0.0.1:${port}`, { pipelining: 8, connect: counted });
    const pending = Array.from({ length: 8 }, (_, i) =>
      client
        .request({ method: 'POST', path: '/', body: `{"n":${i}}`, idempotent: true, blocking: false })
        .catch(() => null),
    );
    while (writes === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    await client.destroy();
    await Promise.all(pending);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return writes;
  }

  it('go out in one socket write, where undici alone writes each request', async () => {
    expect(await writesForEight((c) => c)).toBe(8);
    expect(await writesForEight(writesPerTurn)).toBe(1);
  });
});
