import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import { sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { AppError } from '../../src/core/errors.js';
import { startWebhooks, type PlatformWebhookOptions } from '../../src/webhooks/platform-hooks.js';
import { verify } from '../../src/webhooks/signing.js';
import type { CreateInput } from '../../src/webhooks/subscription.js';
import { T0, tinyModel } from '../cloud/fixture.js';
import { startTestReceiver } from './receiver-fixture.js';

/**
 * Scenario-declared webhooks across starts on the same store (`--resume`): the file is the
 * subscription's source, so a changed file (a receiver on a new port, a new secret) updates
 * the stored subscription, keeping its id and outbox.
 */
const OLD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW_SECRET = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** An empty occupancy event outbox. */
const NO_EVENTS = { events: () => Promise.resolve([]), close: () => Promise.resolve() };

function start(dbPath: string, clock: VirtualClock, input: CreateInput) {
  const declared: PlatformWebhookOptions['declared'] = [{ orgId: 'org_1', input, src: 'file.yaml webhooks[0]' }];
  return startWebhooks(
    { webhooks: sqliteWebhookStore(dbPath), events: NO_EVENTS },
    catalogueFromScenario(tinyModel()),
    clock,
    { seed: 1, allow: ['127.0.0.1/8'], declared },
  );
}

describe('scenario-declared webhooks on a resumed store', () => {
  it('take the changed file’s URL, types, filters and secret, keep id and outbox, and a disabled one comes back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-redeclare-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'store.sqlite');
    const clock = new VirtualClock(T0);
    const first = await start(dbPath, clock, {
      name: 'rooms',
      eventTypes: ['ROOM_OCCUPANCY'],
      url: 'http://127.0.0.1:9/old',
      secret: OLD_SECRET,
    });
    const [sub] = first.service.all();
    if (!sub) throw new Error('not created');
    // The old receiver failed long enough: disabled, one delivery waiting for a retry hours away.
    await first.service.changeState(sub.id, () => ({
      ...sub,
      status: 'DISABLED',
      failingSinceMs: T0 - 13 * 3_600_000,
      disabledReason: 'failing since …',
    }));
    const body = JSON.stringify({ id: 'event_1', type: 'ROOM_OCCUPANCY' });
    const store = new SqliteWebhookStore(dbPath);
    store.enqueue([
      {
        subscriptionId: sub.id,
        eventId: 'event_1',
        eventType: 'ROOM_OCCUPANCY',
        eventTimestampMs: T0,
        body,
        enqueuedAtMs: T0,
        nextAttemptMs: T0 + 6 * 3_600_000,
      },
    ]);
    const [waiting] = store.deliveries(sub.id);
    store.close();
    await first.close();

    const receiver = await startTestReceiver();
    closers.push(() => receiver.close());
    const second = await start(dbPath, clock, {
      name: 'rooms',
      eventTypes: ['ROOM_OCCUPANCY', 'FLOOR_OCCUPANCY'],
      url: receiver.url,
      secret: NEW_SECRET,
      filters: { room_ids: ['room_a'] },
      apiKey: { key: 'x-api-key', value: 'k' },
    });
    closers.push(() => second.close());
    const [now] = second.service.all();
    expect(second.service.all()).toHaveLength(1);
    expect(now).toMatchObject({
      id: sub.id,
      status: 'ENABLED',
      failingSinceMs: null,
      disabledReason: null,
      eventTypes: ['ROOM_OCCUPANCY', 'FLOOR_OCCUPANCY'],
      filters: { room_ids: ['room_a'] },
      secrets: [NEW_SECRET],
      endpoint: { url: receiver.url, apiKey: { key: 'x-api-key', value: 'k' } },
    });
    // The waiting retry was for the old endpoint: due now, delivered to the new one, same row, signed with the new secret.
    await second.advance();
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0];
    expect(got?.body).toBe(body);
    expect(got?.headers['x-api-key']).toBe('k');
    const h = got?.headers as Record<string, string>;
    expect(verify([NEW_SECRET], h, body, Number(h['webhook-timestamp']), Infinity).ok).toBe(true);
    expect((await second.stats()).subscriptions[0]).toMatchObject({ id: sub.id, delivered: 1, pending: 0 });
    const check = new SqliteWebhookStore(dbPath);
    expect(check.deliveries(sub.id).map((d) => [d.id, d.state])).toEqual([[waiting?.id, 'delivered']]);
    check.close();
  });

  it('leave an unchanged subscription as stored (a user-disabled one stays disabled), and a file without a secret keeps the derived one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-redeclare-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'store.sqlite');
    const clock = new VirtualClock(T0);
    const input: CreateInput = { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY'], url: 'http://127.0.0.1:9/hook' };
    const first = await start(dbPath, clock, input);
    const [sub] = first.service.all();
    if (!sub) throw new Error('not created');
    await first.service.update('org_1', [{ id: sub.id, status: 'DISABLED' }]);
    const stored = first.service.all()[0];
    await first.close();

    const second = await start(dbPath, clock, input);
    closers.push(() => second.close());
    expect(second.service.all()).toEqual([stored]);
    expect(stored?.secrets).toEqual(sub.secrets);
  });

  it('refuse a changed file that breaks a rule, located at its entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-redeclare-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'store.sqlite');
    const clock = new VirtualClock(T0);
    await (
      await start(dbPath, clock, { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY'], url: 'http://127.0.0.1:9/hook' })
    ).close();
    const bad = () =>
      start(dbPath, clock, { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY'], url: 'http://10.0.0.1/hook' });
    await expect(bad()).rejects.toThrow(AppError);
    await expect(bad()).rejects.toThrow(/file\.yaml webhooks\[0\]\.endpoint_config\.url/);
  });
});

describe('the per-endpoint concurrency limit of declared webhooks', () => {
  function startWith(dbPath: string, clock: VirtualClock, url: string, o: { declared?: number; platform?: number }) {
    const declared: PlatformWebhookOptions['declared'] = [
      {
        orgId: 'org_1',
        input: { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY'], url },
        src: 'file.yaml webhooks[0]',
        ...(o.declared !== undefined ? { concurrency: o.declared } : {}),
      },
    ];
    return startWebhooks(
      { webhooks: sqliteWebhookStore(dbPath), events: NO_EVENTS },
      catalogueFromScenario(tinyModel()),
      clock,
      { seed: 1, allow: ['127.0.0.1/8'], declared, ...(o.platform !== undefined ? { concurrency: o.platform } : {}) },
    );
  }

  /** Deliveries held 20 ms each by the receiver: the most held at once is the limit in use. */
  async function mostInFlight(o: { declared?: number; platform?: number }): Promise<number> {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-limit-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'store.sqlite');
    const receiver = await startTestReceiver();
    closers.push(() => receiver.close());
    let held = 0;
    let most = 0;
    receiver.respond = () => {
      most = Math.max(most, ++held);
      setTimeout(() => held--, 20);
      return { status: 204, delayMs: 20 };
    };
    const hooks = await startWith(dbPath, new VirtualClock(T0), receiver.url, o);
    closers.push(() => hooks.close());
    const [sub] = hooks.service.all();
    if (!sub) throw new Error('not created');
    const store = new SqliteWebhookStore(dbPath);
    store.enqueue(
      Array.from({ length: 24 }, (_, i) => ({
        subscriptionId: sub.id,
        eventId: `event_${i}`,
        eventType: 'ROOM_OCCUPANCY',
        eventTimestampMs: T0 + i,
        body: `{"n":${i}}`,
        enqueuedAtMs: T0,
        nextAttemptMs: T0,
      })),
    );
    store.close();
    await hooks.advance();
    expect(receiver.received.map((r) => r.body)).toEqual(Array.from({ length: 24 }, (_, i) => `{"n":${i}}`));
    return most;
  }

  it('take the file’s limit over the platform’s default, deliver in order at any limit', async () => {
    expect(await mostInFlight({ declared: 3, platform: 8 })).toBe(3);
    expect(await mostInFlight({ platform: 5 })).toBe(5);
    expect(await mostInFlight({ declared: 1 })).toBe(1);
  });

  it('refuse a limit outside 1..64, located at the entry or named as the platform option', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-limit-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const clock = new VirtualClock(T0);
    await expect(startWith(join(dir, 'a.sqlite'), clock, 'http://127.0.0.1:9/', { declared: 65 })).rejects.toThrow(
      /file\.yaml webhooks\[0\]\.concurrency: an integer in 1\.\.64, got 65/,
    );
    await expect(startWith(join(dir, 'b.sqlite'), clock, 'http://127.0.0.1:9/', { platform: 0 })).rejects.toThrow(
      /webhook concurrency: an integer in 1\.\.64, got 0/,
    );
  });
});
