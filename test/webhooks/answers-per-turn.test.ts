import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../src/webhooks/receiver.js';
import { signedHeaders } from '../../src/webhooks/signing.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A request as bytes; `signed: false` carries a wrong signature (answered 401). */
function request(i: number, signed: boolean, extra = ''): string {
  const body = JSON.stringify({ id: `event_${i}`, type: 'TRAFFIC' });
  const h = signedHeaders([SECRET], `event_${i}`, 1000, signed ? body : `${body} `);
  return `POST / HTTP/1.1\r\nhost: x\r\n${extra}webhook-id: ${h['webhook-id']}\r\nwebhook-timestamp: ${h['webhook-timestamp']}\r\nwebhook-signature: ${h['webhook-signature']}\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
}

async function open(rx: Receiver): Promise<{ socket: Socket; reads: string[] }> {
  const socket = connect({ port: rx.port, host: '127.0.0.1' });
  closers.push(() => void socket.destroy());
  await once(socket, 'connect');
  const reads: string[] = [];
  socket.on('data', (d: Buffer) => reads.push(d.toString('latin1')));
  return { socket, reads };
}

const statuses = (text: string): string[] => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1] as string);

async function until(what: () => boolean, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (!what()) {
    if (performance.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a receiver answering a pipelined turn', () => {
  it('sends the answers of requests that arrived together in one write, in request order', async () => {
    const rx = await startReceiver({ port: 0, secrets: [SECRET], out: null });
    closers.push(() => rx.close());
    const { socket, reads } = await open(rx);
    socket.write(Array.from({ length: 16 }, (_, i) => request(i, i % 3 !== 0)).join(''));
    await until(() => statuses(reads.join('')).length === 16);
    expect(statuses(reads.join(''))).toEqual(Array.from({ length: 16 }, (_, i) => (i % 3 !== 0 ? '200' : '401')));
    expect(reads).toHaveLength(1); // one write: one read on loopback
  });

  it('sends every answer before closing a connection whose last request says Connection: close', async () => {
    const rx = await startReceiver({ port: 0, secrets: [SECRET], out: null });
    closers.push(() => rx.close());
    const { socket, reads } = await open(rx);
    const ended = once(socket, 'end');
    socket.write(
      Array.from({ length: 8 }, (_, i) => request(i, true, i === 7 ? 'connection: close\r\n' : '')).join(''),
    );
    await ended;
    expect(statuses(reads.join(''))).toEqual(Array(8).fill('200'));
    expect(reads.join('')).toMatch(/Connection: close\r\n/);
  });

  it('stops reading from a client that does not read its answers, and answers everything once it does', async () => {
    const rx = await startReceiver({ port: 0, secrets: [], out: null });
    closers.push(() => rx.close());
    const { socket, reads } = await open(rx);
    socket.pause(); // the client reads nothing: answers pile up in the kernel's buffers
    const N = 60_000;
    const one = 'POST / HTTP/1.1\r\nhost: x\r\nwebhook-id: a\r\ncontent-length: 2\r\n\r\n{}';
    for (let k = 0; k < N; k += 1000) socket.write(one.repeat(1000));
    // Answered requests stop growing below N: the receiver holds no unbounded list of answers.
    let last = -1;
    await until(() => {
      const now = rx.stats().requests;
      const still = now === last && now > 0;
      last = now;
      return still;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.stats().requests).toBe(last);
    expect(last).toBeLessThan(N);
    socket.resume();
    await until(() => rx.stats().requests === N, 30_000);
    await until(() => statuses(reads.join('')).length === N, 30_000);
  }, 60_000);
});
