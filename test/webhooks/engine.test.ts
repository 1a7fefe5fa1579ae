import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { EventMetadata, eventId } from '../../src/cloud/events.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import { sqliteStore, sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import type { OccupancyEvent } from '../../src/store/port.js';
import { VirtualClock } from '../../src/core/clock.js';
import { AddressPolicy } from '../../src/webhooks/address-policy.js';
import { WebhookEngine } from '../../src/webhooks/engine.js';
import { Sender } from '../../src/webhooks/sender.js';
import { WebhookService } from '../../src/webhooks/service.js';
import { verify } from '../../src/webhooks/signing.js';
import { ROOM_A, ROOM_B, T0, tinyModel } from '../cloud/fixture.js';
import { failsAt, startTestReceiver, type TestReceiver } from './receiver-fixture.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MIN = 60_000;
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function setup(
  opts: { disableAfterMs?: number; seed?: number; fanOutEvents?: number; timestampClock?: () => number } = {},
) {
  const receiver = await startTestReceiver();
  closers.push(() => receiver.close());
  const clock = new VirtualClock(T0);
  const events = new SqliteStore(':memory:');
  // The adapter itself for the test's reads; the engine and the service await it through the port.
  const store = new SqliteWebhookStore(':memory:');
  const port = sqliteWebhookStore(store);
  const policy = new AddressPolicy(['127.0.0.1/8']);
  const service = await WebhookService.open(port, policy, () => SECRET);
  const sender = new Sender({ policy, concurrency: 8 });
  const outbox = sqliteStore(events);
  const engine = await WebhookEngine.open({
    service,
    store: port,
    outbox: (after) => outbox.events(after),
    metadata: new EventMetadata(catalogueFromScenario(tinyModel())),
    clock,
    seed: opts.seed ?? 1,
    sender,
    ...(opts.disableAfterMs !== undefined ? { disableAfterMs: opts.disableAfterMs } : {}),
    ...(opts.fanOutEvents !== undefined ? { fanOutEvents: opts.fanOutEvents } : {}),
    ...(opts.timestampClock ? { timestampClock: opts.timestampClock } : {}),
  });
  closers.push(async () => {
    await sender.close();
    store.close();
    events.close();
  });
  const [sub] = (
    await service.create('org_1', [{ name: 'rooms', eventTypes: ['ROOM_OCCUPANCY_1MIN'], url: receiver.url }])
  ).map((c) => c.subscription);
  /** Minute m's values of both rooms into the outbox, as the recompute writes them. */
  const emit = (m: number, value: number): void => {
    const rows: OccupancyEvent[] = [ROOM_A, ROOM_B].map((spaceId) => ({
      eventId: eventId('ROOM_OCCUPANCY_1M', spaceId, T0 + m * MIN, 0),
      type: 'ROOM_OCCUPANCY_1M',
      spaceId,
      minuteMs: T0 + m * MIN,
      value,
      revision: 0,
      emittedAtMs: T0 + (m + 1) * MIN,
    }));
    events.writeEvents(rows);
  };
  /** Advances the platform clock minute by minute to `toMinute`, emitting each minute's events first. */
  const runTo = async (fromMinute: number, toMinute: number, emitting = true): Promise<void> => {
    for (let m = fromMinute; m <= toMinute; m++) {
      if (emitting) emit(m, m % 4);
      clock.advanceTo(T0 + (m + 1) * MIN);
      await engine.advance();
    }
  };
  return { receiver, clock, events, store, service, engine, sub: sub as NonNullable<typeof sub>, runTo };
}

const ids = (r: TestReceiver): string[] => r.received.map((x) => String(x.headers['webhook-id']));

describe('send_on_value_change across a restart', () => {
  it('does not resend an unchanged value after the platform restarts on the same store', async () => {
    const receiver = await startTestReceiver();
    closers.push(() => receiver.close());
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-restart-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'store.sqlite');
    const policy = new AddressPolicy(['127.0.0.1/8']);
    const emit = (events: SqliteStore, m: number, value: number): void =>
      events.writeEvents([
        {
          eventId: eventId('ROOM_OCCUPANCY_1M', ROOM_A, T0 + m * MIN, 0),
          type: 'ROOM_OCCUPANCY_1M',
          spaceId: ROOM_A,
          minuteMs: T0 + m * MIN,
          value,
          revision: 0,
          emittedAtMs: T0 + (m + 1) * MIN,
        },
      ]);
    /** One platform life: minutes [from, to] with the given values, then closed. */
    const life = async (from: number, values: readonly number[], create: boolean): Promise<void> => {
      const clock = new VirtualClock(T0 + from * MIN);
      const events = new SqliteStore(path);
      const store = sqliteWebhookStore(path);
      const service = await WebhookService.open(store, policy, () => SECRET);
      if (create)
        await service.create('org_1', [
          {
            name: 'changes',
            eventTypes: ['ROOM_OCCUPANCY_1MIN'],
            url: receiver.url,
            sendOnValueChange: true,
            filters: { room_ids: [ROOM_A] },
          },
        ]);
      const sender = new Sender({ policy, concurrency: 4 });
      const engine = await WebhookEngine.open({
        service,
        store,
        outbox: (after) => Promise.resolve(events.events(after)),
        metadata: new EventMetadata(catalogueFromScenario(tinyModel())),
        clock,
        seed: 1,
        sender,
      });
      for (const [i, v] of values.entries()) {
        emit(events, from + i, v);
        clock.advanceTo(T0 + (from + i + 1) * MIN);
        await engine.advance();
      }
      await sender.close();
      await store.close();
      events.close();
    };
    await life(0, [1, 1, 2, 2], true);
    await life(4, [2, 2, 3], false);
    const values = receiver.received.map((r) => (JSON.parse(r.body) as { data: unknown }).data);
    // Before the store kept the last value, the restart resent the unchanged 2.
    expect(values).toEqual([1, 2, 3]);
  });
});

describe('webhook delivery engine over loopback HTTP', () => {
  it('delivers every outbox event once, signed with the platform time, in (timestamp, id) order, as the spec §6 envelope', async () => {
    const { receiver, runTo, events, clock } = await setup();
    await runTo(0, 9);
    const outbox = events
      .events()
      .sort((a, b) => a.minuteMs - b.minuteMs || (a.eventId < b.eventId ? -1 : 1))
      .map((e) => e.eventId);
    expect(ids(receiver)).toEqual(outbox);
    for (const r of receiver.received) {
      const ts = Number(r.headers['webhook-timestamp']);
      expect(verify([SECRET], r.headers as Record<string, string>, r.body, ts)).toEqual({ ok: true });
      expect(ts * 1000).toBeLessThanOrEqual(clock.now());
    }
    const first = JSON.parse(receiver.received[0]?.body ?? '{}') as Record<string, unknown>;
    expect(Object.keys(first)).toEqual(['id', 'type', 'timestamp', 'version', 'metadata', 'data']);
    expect(first).toMatchObject({
      type: 'ROOM_OCCUPANCY_1M',
      timestamp: T0,
      version: 'v1.0.0',
      data: 0,
      metadata: { room_id: ROOM_A, org_id: 'org_1' },
    });
  });

  it('enqueues a backlog larger than one fan-out transaction exactly once, and delivers it in order over rounds', async () => {
    const { receiver, events, engine, clock, store, sub } = await setup({ fanOutEvents: 512 });
    // 700 minutes of both rooms: 1,400 events behind the cursor at once (three fan-out transactions, six rounds of 256).
    const rows: OccupancyEvent[] = [];
    for (let m = 0; m < 700; m++) {
      for (const spaceId of [ROOM_A, ROOM_B])
        rows.push({
          eventId: eventId('ROOM_OCCUPANCY_1M', spaceId, T0 + m * MIN, 0),
          type: 'ROOM_OCCUPANCY_1M',
          spaceId,
          minuteMs: T0 + m * MIN,
          value: m % 3,
          revision: 0,
          emittedAtMs: T0 + 700 * MIN,
        });
    }
    events.writeEvents(rows);
    clock.advanceTo(T0 + 700 * MIN);
    await engine.advance();
    await engine.advance();
    const outbox = events
      .events()
      .sort((a, b) => a.minuteMs - b.minuteMs || (a.eventId < b.eventId ? -1 : 1))
      .map((e) => e.eventId);
    expect(ids(receiver)).toEqual(outbox);
    expect(store.deliveries(sub.id)).toHaveLength(1400);
    expect(store.cursor('webhook_outbox_after')).toBe(events.events().at(-1)?.id);
  });

  it('loses nothing while the receiver is down for 30 simulated minutes', async () => {
    const { receiver, runTo, events, engine, sub } = await setup();
    await runTo(0, 4);
    await receiver.down();
    await runTo(5, 34);
    expect(receiver.received).toHaveLength(10);
    await receiver.up();
    await runTo(35, 120, false);
    const delivered = new Set(ids(receiver));
    expect(delivered.size).toBe(events.events().length);
    expect((await engine.stats()).subscriptions[0]).toMatchObject({
      id: sub.id,
      deadLettered: 0,
      pending: 0,
      disabled: 0,
    });
    expect((await engine.stats()).subscriptions[0]?.retried).toBeGreaterThan(0);
  });

  it('loses nothing and duplicates nothing after dedupe when 20 % of requests fail with 500', async () => {
    const { receiver, runTo, events, engine } = await setup();
    receiver.respond = (r, attempt) => ({ status: failsAt(0.2, String(r.headers['webhook-id']), attempt) ? 500 : 200 });
    await runTo(0, 59);
    await runTo(60, 200, false);
    const ok = receiver.received.filter(
      (r, i) =>
        !failsAt(
          0.2,
          String(r.headers['webhook-id']),
          receiver.received.slice(0, i + 1).filter((x) => x.headers['webhook-id'] === r.headers['webhook-id']).length,
        ),
    );
    expect(new Set(ok.map((r) => r.headers['webhook-id'])).size).toBe(events.events().length);
    expect(ok).toHaveLength(events.events().length);
    expect((await engine.stats()).subscriptions[0]?.retried).toBeGreaterThan(10);
  });

  it('honours Retry-After of a 429 on the platform clock', async () => {
    const { receiver, runTo, clock } = await setup();
    const seen: number[] = [];
    receiver.respond = (_r, attempt) => {
      seen.push(clock.now());
      return attempt === 1 ? { status: 429, headers: { 'retry-after': '600' } } : { status: 200 };
    };
    await runTo(0, 0);
    await runTo(1, 8, false);
    expect(receiver.received).toHaveLength(2);
    await runTo(9, 11, false);
    expect(receiver.received).toHaveLength(4);
    expect((seen[2] as number) - (seen[0] as number)).toBeGreaterThanOrEqual(600_000);
  });

  it('dead-letters a permanently refused event, and a replayed dead letter arrives once', async () => {
    const { receiver, runTo, store, sub, clock, engine } = await setup();
    let gone = true;
    receiver.respond = () => ({ status: gone ? 410 : 200 });
    await runTo(0, 0);
    expect(store.deadLetters(sub.id).map((d) => [d.lastError, d.attempts])).toEqual([
      ['HTTP 410', 1],
      ['HTTP 410', 1],
    ]);
    gone = false;
    expect(store.replayDead(sub.id, clock.now())).toBe(2);
    await engine.advance();
    await runTo(1, 5, false);
    expect(ids(receiver)).toHaveLength(4);
    expect(new Set(ids(receiver).slice(2))).toEqual(new Set(ids(receiver).slice(0, 2)));
    expect(store.counts(sub.id)).toEqual({ pending: 0, delivered: 2, dead: 0 });
  });

  it('disables an endpoint failing for the configured period, keeps its events, and delivers them once re-enabled', async () => {
    const { receiver, runTo, service, sub, events, engine } = await setup({ disableAfterMs: 20 * MIN });
    await receiver.down();
    await runTo(0, 40);
    expect(service.get('org_1', sub.id)?.status).toBe('DISABLED');
    expect((await engine.stats()).subscriptions[0]?.disabled).toBe(1);
    await receiver.up();
    await runTo(41, 45);
    const before = receiver.received.length;
    expect(before).toBe(0);
    await service.update('org_1', [{ id: sub.id, status: 'ENABLED' }]);
    await runTo(46, 47, false);
    expect(new Set(ids(receiver)).size).toBe(events.events().length);
  });

  it('runs a simulated day of outage in seconds: disabled after 12 h of failures, nothing lost once re-enabled', async () => {
    const { receiver, runTo, service, sub, events, engine, store } = await setup();
    await receiver.down();
    const t0 = performance.now();
    await runTo(0, 119);
    await runTo(120, 24 * 60, false);
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect(service.get('org_1', sub.id)?.status).toBe('DISABLED');
    expect(store.counts(sub.id)).toEqual({ pending: events.events().length, delivered: 0, dead: 0 });
    await receiver.up();
    await service.update('org_1', [{ id: sub.id, status: 'ENABLED' }]);
    await runTo(24 * 60 + 1, 24 * 60 + 2, false);
    expect(new Set(ids(receiver)).size).toBe(events.events().length);
    expect((await engine.stats()).subscriptions[0]).toMatchObject({ deadLettered: 0, disabled: 1, pending: 0 });
  }, 30_000);

  it('stamps webhook-timestamp from the injected wall clock at each attempt; ids, bodies and order are those of simulated stamps', async () => {
    const simulated = await setup({ seed: 5 });
    await simulated.runTo(0, 4);
    let wallS = 1_900_000_000;
    const wall = await setup({ seed: 5, timestampClock: () => 1000 * wallS++ });
    await wall.runTo(0, 4);
    const stamps = wall.receiver.received.map((r) => Number(r.headers['webhook-timestamp']));
    expect(stamps).toEqual(stamps.map((_, i) => 1_900_000_000 + i));
    for (const r of wall.receiver.received)
      expect(
        verify([SECRET], r.headers as Record<string, string>, r.body, Number(r.headers['webhook-timestamp'])),
      ).toEqual({ ok: true });
    const bodies = (r: TestReceiver): string[] => r.received.map((x) => `${String(x.headers['webhook-id'])} ${x.body}`);
    expect(bodies(wall.receiver)).toEqual(bodies(simulated.receiver));
    expect(
      simulated.receiver.received.every((r) => Number(r.headers['webhook-timestamp']) * 1000 <= simulated.clock.now()),
    ).toBe(true);
  });

  it('sends byte-identical requests to the endpoint when the same run is repeated', async () => {
    const once = async (): Promise<string[]> => {
      const { receiver, runTo } = await setup({ seed: 9 });
      receiver.respond = (r, attempt) => ({
        status: failsAt(0.3, String(r.headers['webhook-id']), attempt) ? 503 : 200,
      });
      await runTo(0, 30);
      await runTo(31, 90, false);
      return receiver.received.map(
        (r) =>
          `${String(r.headers['webhook-id'])} ${String(r.headers['webhook-timestamp'])} ${String(r.headers['webhook-signature'])} ${r.body}`,
      );
    };
    const a = await once();
    const b = await once();
    expect(a.length).toBeGreaterThan(62);
    expect(b).toEqual(a);
  });
});
