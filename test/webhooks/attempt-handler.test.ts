import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { eventId } from '../../src/cloud/events.js';
import { sqliteStore, sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import { VirtualClock } from '../../src/core/clock.js';
import { startWebhooks } from '../../src/webhooks/platform-hooks.js';
import type { RetryPolicy } from '../../src/webhooks/retry.js';
import { ROOM_A, T0, tinyModel } from '../cloud/fixture.js';
import { startFaultyEndpoint, type Fault, type FaultyEndpoint } from './endpoint-faults.js';

/**
 * Issue 33 items 3 and 4, measured on the wire: every request an endpoint receives is an
 * attempt of the retry schedule (undici re-sent pipelined POSTs after each broken connection:
 * 411,744 requests in 20 s for 4,200 events, up to 128 per webhook-id; a huge answer drew 16
 * attempts per event), and `http_timeout` bounds the whole attempt (a 1 byte/s answer held one
 * 44.8 s with http_timeout 10). The platform's clock is virtual: retries come at simulated
 * instants, so a schedule of 5 attempts takes seconds.
 */
const RETRY: RetryPolicy = { baseMs: 1_000, capMs: 8_000, maxAttempts: 5, maxRetryAfterMs: 1_000 };
const EVENTS = 40;
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** `events` occupancy events to `fault`'s endpoint, the clock moved 10 s at a time until nothing is pending (or 40 s of wall time). */
async function deliverTo(
  fault: Fault,
  events: number,
  httpTimeoutS = 5,
): Promise<{ endpoint: FaultyEndpoint; attempts: number[]; states: string[]; errors: Array<string | null> }> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-attempts-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'store.sqlite');
  const outbox = new SqliteStore(dbPath);
  closers.push(() => outbox.close());
  const endpoint = await startFaultyEndpoint(fault);
  closers.push(() => endpoint.close());
  const clock = new VirtualClock(T0);
  const hooks = await startWebhooks(
    { webhooks: sqliteWebhookStore(dbPath), events: sqliteStore(dbPath) },
    catalogueFromScenario(tinyModel()),
    clock,
    {
      seed: 1,
      allow: ['127.0.0.1/8'],
      retry: RETRY,
      declared: [
        { orgId: 'org_1', input: { name: 'faulty', eventTypes: ['ROOM_OCCUPANCY'], url: endpoint.url, httpTimeoutS } },
      ],
    },
  );
  closers.push(() => hooks.close());
  outbox.writeEvents(
    Array.from({ length: events }, (_, i) => ({
      eventId: eventId('ROOM_OCCUPANCY', ROOM_A, T0 + i * 60_000, 0),
      type: 'ROOM_OCCUPANCY',
      spaceId: ROOM_A,
      minuteMs: T0 + i * 60_000,
      value: i,
      revision: 0,
      emittedAtMs: T0,
    })),
  );
  // A lane waiting on a slow endpoint runs on its own: the clock goes on until nothing is pending.
  const deadline = performance.now() + 40_000;
  for (let t = T0; performance.now() < deadline; t += 10_000) {
    clock.advanceTo(t);
    await hooks.advance();
    if ((await hooks.stats()).subscriptions[0]?.pending === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const rows = new SqliteWebhookStore(dbPath);
  const id = hooks.service.all()[0]?.id as string;
  const deliveries = rows.deliveries(id);
  rows.close();
  return {
    endpoint,
    attempts: deliveries.map((d) => d.attempts),
    states: deliveries.map((d) => d.state),
    errors: deliveries.map((d) => d.lastError),
  };
}

describe('an attempt is one request on the wire', () => {
  it('against an endpoint resetting every connection: each event is tried exactly the schedule (5 attempts), then dead-lettered', async () => {
    const { endpoint, attempts, states } = await deliverTo('reset', EVENTS);
    const onWire = [...endpoint.seen.values()];
    const total = onWire.reduce((a, n) => a + n, 0);
    console.log(
      `reset: ${EVENTS} events, attempts per event ${JSON.stringify([...new Set(attempts)])} (schedule ${RETRY.maxAttempts}), requests on the wire ${total} (max ${Math.max(...onWire)} per webhook-id)`,
    );
    expect(states).toEqual(Array(EVENTS).fill('dead'));
    expect(attempts).toEqual(Array(EVENTS).fill(RETRY.maxAttempts));
    // A request written into a connection the endpoint had already reset may never arrive: at most, never more.
    expect(Math.max(...onWire)).toBeLessThanOrEqual(RETRY.maxAttempts);
    expect(total).toBeLessThanOrEqual(EVENTS * RETRY.maxAttempts);
    expect(endpoint.seen.size).toBe(EVENTS);
  }, 60_000);

  it('against an endpoint answering 200 with 8 MiB: each event delivered at its first attempt, its outcome given after 64 KiB, the rest drained and dropped', async () => {
    const { endpoint, attempts, states } = await deliverTo('huge-body', EVENTS);
    console.log(
      `huge body: attempts per event ${JSON.stringify([...new Set(attempts)])}, requests on the wire ${[...endpoint.seen.values()].reduce((a, n) => a + n, 0)}`,
    );
    expect(states).toEqual(Array(EVENTS).fill('delivered'));
    expect(attempts).toEqual(Array(EVENTS).fill(1));
    expect([...endpoint.seen.values()]).toEqual(Array(EVENTS).fill(1));
  }, 60_000);

  it.each<Fault>(['trickle-body', 'trickle-headers'])(
    "cuts an answer arriving one byte a second ('%s') at http_timeout (2 s), counted as one failed attempt",
    async (fault) => {
      const { endpoint, attempts } = await deliverTo(fault, 1, 2);
      // The last attempt is recorded as its connection is cut: the endpoint sees the close a moment later.
      for (
        const until = performance.now() + 2_000;
        endpoint.held.length < (attempts[0] ?? 0) && performance.now() < until;
      )
        await new Promise((r) => setTimeout(r, 20));
      console.log(
        `${fault}: connections held ${endpoint.held.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')} (http_timeout 2 s); attempts ${attempts.join(',')}`,
      );
      expect(endpoint.held.length).toBeGreaterThan(0);
      for (const ms of endpoint.held) {
        expect(ms).toBeGreaterThan(1_900);
        expect(ms).toBeLessThan(2_600);
      }
      expect(attempts[0]).toBe(endpoint.held.length);
    },
    60_000,
  );
});
