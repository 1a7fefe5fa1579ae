import { describe, expect, it } from 'vitest';
import { sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import type { AsyncWebhookStore } from '../../src/store/webhook-port.js';
import { AddressPolicy } from '../../src/webhooks/address-policy.js';
import { WebhookService } from '../../src/webhooks/service.js';

/**
 * The service over the asynchronous webhook port: its changes run one after another, each
 * from the state the previous one left, whatever the store's latency.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const policy = new AddressPolicy(['127.0.0.1/8']);

/** The SQLite port with every answer delayed by a macrotask (as a network store answers). */
function slowStore(): AsyncWebhookStore {
  const store = sqliteWebhookStore(':memory:');
  return new Proxy(store, {
    get(target, name) {
      const op = target[name as keyof AsyncWebhookStore] as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        await new Promise((r) => setTimeout(r, 1));
        return op(...args);
      };
    },
  });
}

const input = (name: string, type: string) => ({ name, eventTypes: [type], url: 'http://127.0.0.1:9/hook' });

describe('the webhook service on an asynchronous store', () => {
  it('gives concurrent creates distinct ids, in call order, and keeps them across a reopen', async () => {
    const store = slowStore();
    const service = await WebhookService.open(store, policy, () => SECRET);
    const made = await Promise.all([
      service.create('org_1', [input('a', 'TRAFFIC')]),
      service.create('org_1', [input('b', 'DETECTIONS'), input('c', 'ROOM_OCCUPANCY')]),
      service.create('org_2', [input('d', 'TRAFFIC')]),
    ]);
    expect(made.flat().map((m) => [m.subscription.id, m.subscription.name])).toEqual([
      ['webhook_1', 'a'],
      ['webhook_2', 'b'],
      ['webhook_3', 'c'],
      ['webhook_4', 'd'],
    ]);
    const again = await WebhookService.open(store, policy);
    expect(again.all().map((s) => s.id)).toEqual(['webhook_1', 'webhook_2', 'webhook_3', 'webhook_4']);
    await store.close();
  });

  it('refuses a second subscription of a type asked for concurrently, and a refused create takes no id', async () => {
    const store = slowStore();
    const service = await WebhookService.open(store, policy, () => SECRET);
    const [first, second] = await Promise.allSettled([
      service.create('org_1', [input('a', 'TRAFFIC')]),
      service.create('org_1', [input('b', 'TRAFFIC')]),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'WEBHOOK_DUPLICATE_EVENT_TYPE' } });
    expect((await service.create('org_1', [input('c', 'DETECTIONS')]))[0]?.subscription.id).toBe('webhook_2');
    await store.close();
  });

  it('computes the engine’s state change from the subscription as it is when the change runs, keeping a user’s update made meanwhile', async () => {
    const store = slowStore();
    const service = await WebhookService.open(store, policy, () => SECRET);
    const [sub] = (await service.create('org_1', [input('a', 'TRAFFIC')])).map((m) => m.subscription);
    const id = sub?.id as string;
    const seen: string[] = [];
    service.onChange(async () => {
      await new Promise((r) => setTimeout(r, 1));
      seen.push(service.get('org_1', id)?.status ?? 'gone');
    });
    // The user disables it; the engine, having looked before, marks it failing.
    await Promise.all([
      service.update('org_1', [{ id, status: 'DISABLED' }]),
      service.changeState(id, (current) => ({ ...current, failingSinceMs: 5 })),
    ]);
    expect(service.get('org_1', id)).toMatchObject({
      status: 'DISABLED',
      disabledReason: 'disabled by the user',
      failingSinceMs: 5,
    });
    // Listeners were awaited before the next change started.
    expect(seen).toEqual(['DISABLED', 'DISABLED']);
    const again = await WebhookService.open(store, policy);
    expect(again.all()[0]).toEqual(service.get('org_1', id));
    await store.close();
  });
});
