import { connect as netConnect, type Socket } from 'node:net';
import { once } from 'node:events';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedBroker } from '../../src/broker/aedes-broker.js';
import { PacketScanner } from '../../src/broker/packet-gate.js';
import { HIVES, startTestBroker } from './support.js';

/** MQTT Remaining Length (§2.2.3): 7-bit groups, least significant first. */
function remainingLength(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

const str = (s: string): number[] => [s.length >> 8, s.length & 0xff, ...Buffer.from(s)];

/** A clean-session MQTT 3.1.1 CONNECT with user name and password. */
function connectPacket(clientId: string, username: string, password: string): Buffer {
  const body = [...str('MQTT'), 4, 0xc2, 0, 60, ...str(clientId), ...str(username), ...str(password)];
  return Buffer.from([0x10, ...remainingLength(body.length), ...body]);
}

/**
 * Writes `header`, then zero bytes in 1 MiB chunks until the broker closes the socket or
 * `maxBytes` went out; resolves with how long the broker took to close it (Infinity if never).
 */
async function floodUntilClosed(socket: Socket, header: Buffer, maxBytes: number): Promise<number> {
  const t0 = performance.now();
  let closedAt = Infinity;
  // Plain listeners, not events.once: once() rejects on the reset a refused socket gets.
  const closed = new Promise((r) => socket.once('close', r)).then(() => (closedAt = performance.now() - t0));
  socket.write(header);
  const chunk = Buffer.alloc(1024 * 1024);
  for (let sent = 0; sent < maxBytes && closedAt === Infinity && !socket.destroyed; sent += chunk.length) {
    if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
  }
  await Promise.race([closed, new Promise((r) => setTimeout(r, 3000))]);
  socket.destroy();
  return closedAt;
}

function rawSocket(port: number): Promise<Socket> {
  const socket = netConnect(port, '127.0.0.1');
  // A refused connection is reset while we write: that is the expected outcome, not an error.
  socket.on('error', () => {});
  return once(socket, 'connect').then(() => socket);
}

const MiB = 1024 * 1024;
let broker: EmbeddedBroker;

beforeEach(async () => {
  broker = await startTestBroker();
});

afterEach(async () => {
  await broker.close();
});

describe('broker packet gate', () => {
  it('closes an unauthenticated CONNECT announcing 255 MiB at once, before buffering it', async () => {
    globalThis.gc?.();
    const rss0 = process.memoryUsage().rss;
    const sockets = await Promise.all([0, 1, 2].map(() => rawSocket(broker.port)));
    const header = Buffer.from([0x10, ...remainingLength(255 * MiB)]);
    // Three in parallel, each willing to send 32 MiB: without the gate the broker keeps
    // reading and buffers ~2× what arrives (measured: +260 MB for one, +770 MB for three).
    const closedAfterMs = await Promise.all(sockets.map((s) => floodUntilClosed(s, header, 32 * MiB)));
    const grownMiB = (process.memoryUsage().rss - rss0) / MiB;
    for (const ms of closedAfterMs) expect(ms).toBeLessThan(1000);
    // Stated bound: 48 MiB for test-side buffers and GC noise, far below the 96 MiB offered.
    expect(grownMiB).toBeLessThan(48);
    expect(broker.stats().refusedAuth).toBe(3);
  });

  it('closes an authenticated PUBLISH announcing 200 MiB as soon as its header arrives', async () => {
    const socket = await rawSocket(broker.port);
    socket.write(connectPacket(`hive-${HIVES[0].serial}`, HIVES[0].serial, HIVES[0].password));
    const [connack] = (await once(socket, 'data')) as [Buffer];
    expect([...connack]).toEqual([0x20, 2, 0, 0]);
    const topic = str(`occusim/v1/hives/${HIVES[0].serial}/uplink`);
    const header = Buffer.from([0x32, ...remainingLength(200 * MiB), ...topic, 0, 1]);
    const ms = await floodUntilClosed(socket, header, 32 * MiB);
    expect(ms).toBeLessThan(1000);
    expect(broker.stats().refusedAcl).toBe(1);
  });

  it('finds every packet boundary whatever the chunking, so within-bound traffic is never refused (fast-check seed 303)', () => {
    const limits = { maxConnectBytes: 64, maxPacketBytes: 300 };
    const packet = fc
      .integer({ min: 0, max: 300 })
      .map((n) => Buffer.concat([Buffer.from([0x30, ...remainingLength(n)]), Buffer.alloc(n, 0x80)]));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 64 }),
        fc.array(packet, { maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1 }),
        (connectLen, packets, cuts) => {
          const bytes = Buffer.concat([
            Buffer.from([0x10, ...remainingLength(connectLen)]),
            Buffer.alloc(connectLen),
            ...packets,
          ]);
          const scanner = new PacketScanner(limits);
          for (let i = 0, k = 0; i < bytes.length; k++) {
            const n = cuts[k % cuts.length]!;
            expect(scanner.scan(bytes.subarray(i, i + n))).toBeNull();
            i += n;
          }
          // One byte over the bound on the next header is caught, whatever came before.
          expect(scanner.scan(Buffer.from([0x30, ...remainingLength(301)]))).toMatchObject({
            kind: 'packet-too-large',
          });
        },
      ),
      { seed: 303, numRuns: 300 },
    );
  });

  it('refuses a fifth Remaining Length byte as malformed (§2.2.3)', () => {
    const scanner = new PacketScanner({ maxConnectBytes: 2 ** 30, maxPacketBytes: 2 ** 30 });
    expect(scanner.scan(Buffer.from([0x10, 0x80, 0x80, 0x80, 0x80]))).toMatchObject({ kind: 'malformed-length' });
  });
});
