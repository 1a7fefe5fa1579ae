import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveServer, type LiveServer } from './support.js';

/**
 * Backpressure of `/live/events` (issue 33, item 6): 200 loopback clients that read the
 * answer's head and then never read again, while the platform publishes a busy floor as fast
 * as it can. Before, every event was queued in each stalled socket's buffer (RSS +1.4 MB/s);
 * now a stream holds at most the latest event beyond its socket, is dropped once it has not
 * drained for `stallMs`, and a client that reads keeps getting events meanwhile.
 */
const STALLED = 200;
const STALL_MS = 2_000;
/** Publishing goes on until every stalled stream is dropped, or this long. */
const PUBLISH_MAX_MS = 45_000;
const PEOPLE = 5_000;
let live: LiveServer;
let token: string;

beforeAll(async () => {
  live = await liveServer({ perSubject: 256, total: 256, stallMs: STALL_MS, maxBufferedBytes: 4 * 1024 * 1024 });
  token = await live.token(live.own);
}, 60_000);
afterAll(async () => live?.close());

/** A client that reads the answer's head, then stops reading; resolves with its socket once the head is in. */
function stalledClient(port: number, path: string): Promise<{ socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('error', () => undefined);
    socket.once('data', (head: Buffer) => {
      socket.pause();
      if (!head.toString('latin1').startsWith('HTTP/1.1 200'))
        reject(new Error(`refused: ${head.toString('latin1').split('\r\n')[0]}`));
      else resolve({ socket });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  });
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

describe('/live backpressure', () => {
  it(`drops ${STALLED} clients that stop reading, keeps RSS bounded, and keeps serving a client that reads`, async () => {
    const floorId = live.own.floors[0]?.id as string;
    const path = `/live/events?floor=${floorId}`;
    const people: Array<[string, number, number]> = Array.from({ length: PEOPLE }, (_, i) => [
      `person_${i}`,
      (i % 40) + 0.123,
      Math.floor(i / 40) + 0.456,
    ]);
    let at = 0;
    const publish = (): void => live.hub.publish({ atMs: ++at, people: { [floorId]: people }, rooms: {} });
    publish();
    const clients = await Promise.all(Array.from({ length: STALLED }, () => stalledClient(live.server.port, path)));
    // A reader beside them: it counts the events it receives.
    const abort = new AbortController();
    const res = await fetch(`${live.server.url}${path}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let readerBytes = 0;
    let readerEvents = 0;
    const reading = (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const c = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (c.done) return;
        readerBytes += c.value.length;
        readerEvents += (decoder.decode(c.value, { stream: true }).match(/\n\n/g) ?? []).length;
      }
    })();
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const eventBytes = JSON.stringify({ people }).length;
    const started = performance.now();
    let published = 0;
    // The server's own count: a stalled client reads nothing, so it cannot see its stream end.
    expect(live.hub.subscribers).toBe(STALLED + 1);
    while (live.hub.subscribers > 1 && performance.now() - started < PUBLISH_MAX_MS) {
      publish();
      published++;
      peak = Math.max(peak, process.memoryUsage().rss);
      await new Promise((r) => setTimeout(r, 10));
    }
    const droppedWithinMs = performance.now() - started;
    peak = Math.max(peak, process.memoryUsage().rss);
    const offeredMb = (published * STALLED * eventBytes) / 1024 / 1024;
    console.log(
      `live backpressure: ${STALLED} stalled clients, ${published} publishes of a ${(eventBytes / 1024).toFixed(0)} KB floor (${offeredMb.toFixed(0)} MB offered to them); ` +
        `RSS ${mb(base)} MB → peak ${mb(peak)} MB (+${mb(peak - base)} MB); every stalled client dropped ${(droppedWithinMs / 1000).toFixed(1)} s after publishing began; ` +
        `the reading client got ${readerEvents} events (${mb(readerBytes)} MB)`,
    );
    // Every stalled stream was dropped, the reader's kept.
    expect(live.hub.subscribers).toBe(1);
    // Bounded: at most the latest event held per stream beyond its socket, whatever was offered.
    expect(peak - base).toBeLessThan(128 * 1024 * 1024);
    // The reader went on receiving throughout.
    expect(readerEvents).toBeGreaterThan(20);
    abort.abort();
    await reading;
    for (const c of clients) c.socket.destroy();
  }, 60_000);
});
