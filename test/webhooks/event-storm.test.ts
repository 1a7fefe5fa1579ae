import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { EventMetadata } from '../../src/cloud/events.js';
import { sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { AppError } from '../../src/core/errors.js';
import { EventStorms } from '../../src/webhooks/event-storm.js';
import { startWebhooks, type PlatformWebhookOptions } from '../../src/webhooks/platform-hooks.js';
import type { WebhookStorm } from '../../src/webhooks/storm.js';
import type { Subscription } from '../../src/webhooks/subscription.js';
import { FLOOR, ROOM_A, T0, tinyModel } from '../cloud/fixture.js';
import { startTestReceiver } from './receiver-fixture.js';

/**
 * Event-storm mode (issue 29 item 3): events at a rate for one subscription, independent of the
 * people — valid spec §6 bodies, the same ids and bodies whatever the advance pattern, through
 * the outbox to a real endpoint over loopback, signed (the Standard Webhooks library judges),
 * counted, and in the expected consumer state.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const catalogue = () => catalogueFromScenario(tinyModel());

function subscription(over: Partial<Subscription> = {}): Subscription {
  return {
    id: 'webhook_1',
    orgId: 'org_1',
    name: 'stormy',
    eventTypes: ['DETECTIONS', 'ROOM_OCCUPANCY_1M', 'TRAFFIC'],
    filters: {},
    sendOnValueChange: false,
    endpoint: { url: 'http://127.0.0.1:9/', auth: null, timeoutS: 10 },
    secrets: [SECRET],
    status: 'ENABLED',
    disabledReason: null,
    failingSinceMs: null,
    ...over,
  } as Subscription;
}

function storms(storm: WebhookStorm, seed: number | string = 7): EventStorms {
  const c = catalogue();
  return new EventStorms({ seed, catalogue: c, metadata: new EventMetadata(c), stormOf: () => storm });
}

/** Every delivery of `steps` advances (platform instants), in `max`-sized takes. */
function drain(e: EventStorms, subs: Subscription[], steps: number[], max = 4096) {
  const out = [];
  for (const t of steps)
    for (let chunk = e.take(subs, t, max); chunk.length > 0; chunk = e.take(subs, t, max)) out.push(...chunk);
  return out;
}

describe('event storms', () => {
  it('make rate × time events, the same ids and bodies whatever the advance pattern or take size', () => {
    const s = subscription();
    const a = storms({ rate: 250 });
    a.begin([s], T0);
    const once = drain(a, [s], [T0 + 10_000]);
    const b = storms({ rate: 250 });
    b.begin([s], T0);
    const steps = Array.from({ length: 37 }, (_, i) => T0 + Math.round(((i + 1) * 10_000) / 37));
    const stepped = drain(b, [s], steps, 7);
    expect(once).toHaveLength(2_500);
    expect(stepped.map((d) => [d.eventId, d.body])).toEqual(once.map((d) => [d.eventId, d.body]));
    expect(a.counts(s.id)).toEqual({ rate: 250, generated: 2_500, delivered: 0 });
    // Another seed: other events.
    const c = storms({ rate: 250 }, 8);
    c.begin([s], T0);
    expect(drain(c, [s], [T0 + 10_000])[0]?.eventId).not.toBe(once[0]?.eventId);
  });

  it('writes spec §6 envelopes of the storm’s types in turn, about the organisation’s own subjects', () => {
    const s = subscription();
    const e = storms({ rate: 30, types: ['ROOM_OCCUPANCY_1M', 'DETECTIONS', 'TRAFFIC'] });
    e.begin([s], T0 + 1_500);
    const out = drain(e, [s], [T0 + 61_500]);
    expect(out).toHaveLength(1_800);
    const rooms = new Set(catalogue().rooms.keys());
    out.forEach((d, k) => {
      const body = JSON.parse(d.body) as {
        id: string;
        type: string;
        timestamp: number;
        version: string;
        metadata: Record<string, string>;
        data: unknown;
      };
      expect(Object.keys(body)).toEqual(['id', 'type', 'timestamp', 'version', 'metadata', 'data']);
      expect(body.id).toBe(d.eventId);
      expect(body.id).toMatch(/^event_storm_[0-9a-f]{24}$/);
      expect(body.type).toBe(['ROOM_OCCUPANCY_1M', 'DETECTIONS', 'TRAFFIC'][k % 3]);
      expect(body.version).toBe('v1.0.0');
      expect(body.metadata.org_id).toBe('org_1');
      const at = T0 + 1_500 + Math.floor((k * 1000) / 30);
      if (body.type === 'ROOM_OCCUPANCY_1M') {
        expect(body.timestamp).toBe(at - (at % 60_000));
        expect(rooms.has(body.metadata.room_id ?? '')).toBe(true);
        expect(body.data).toEqual(expect.any(Number));
      } else {
        expect(body.timestamp).toBe(at);
        expect(body.metadata.sensor_id).toMatch(/^[0-9a-z]+$/);
      }
      if (body.type === 'TRAFFIC') expect(body.data).toEqual({ in: expect.any(Number), out: expect.any(Number) });
      if (body.type === 'DETECTIONS') {
        const p = body.data as { local: number[][]; world: number[][] };
        expect(p.world).toHaveLength(p.local.length);
        for (const [x, y] of p.local) expect(x! >= 0 && x! <= 1 && y! >= 0 && y! <= 1).toBe(true);
      }
    });
  });

  it('keeps to the subscription’s filters and types, and names the types with nothing to be about', () => {
    const s = subscription({ filters: { room_ids: [ROOM_A] }, eventTypes: ['ROOM_OCCUPANCY_1M', 'FLOOR_OCCUPANCY'] });
    const e = storms({ rate: 100 });
    e.begin([s], T0);
    const out = drain(e, [s], [T0 + 1_000]);
    // FLOOR_OCCUPANCY has no room_id: the filter lets no floor through, so the storm is all rooms, room A's.
    expect(new Set(out.map((d) => (JSON.parse(d.body) as { metadata: { room_id: string } }).metadata.room_id))).toEqual(
      new Set([ROOM_A]),
    );
    expect(e.subjectless(s, { rate: 100 })).toEqual(['FLOOR_OCCUPANCY']);
    expect(e.subjectless(subscription(), { rate: 1, types: ['FLOOR_OCCUPANCY'] })).toEqual([]);
    expect(catalogue().floors.has(FLOOR)).toBe(true);
  });

  it('goes through the outbox to a real endpoint, signed, counted per subscription, and into the expected state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-storm-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const receiver = await startTestReceiver();
    closers.push(() => receiver.close());
    const clock = new VirtualClock(T0);
    const declared: PlatformWebhookOptions['declared'] = [
      {
        orgId: 'org_1',
        src: 'storm.yaml webhooks[0]',
        input: { name: 'stormy', eventTypes: ['DETECTIONS', 'ROOM_OCCUPANCY_1M'], url: receiver.url, secret: SECRET },
        storm: { rate: 400 },
      },
    ];
    const hooks = await startWebhooks(
      { webhooks: sqliteWebhookStore(join(dir, 's.sqlite')), events: NO_EVENTS },
      catalogue(),
      clock,
      { seed: 3, allow: ['127.0.0.1/8'], declared, consumerExpect: true },
    );
    closers.push(() => hooks.close());
    for (let i = 0; i < 5; i++) {
      clock.advanceTo(T0 + (i + 1) * 1_000);
      await hooks.advance();
    }
    const stats = await hooks.stats();
    expect(receiver.received).toHaveLength(2_000);
    const wh = new StandardWebhook(SECRET);
    for (const r of receiver.received)
      expect(() => wh.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    expect(stats.subscriptions[0]).toMatchObject({
      delivered: 2_000,
      pending: 0,
      storm: { rate: 400, generated: 2_000, delivered: 2_000 },
    });
    expect(stats.endpoints[0]?.deliveredPerWallS).toBeGreaterThan(0);
    // The expected state folds the storm's deliveries as a consumer must: DETECTIONS summed per sensor-minute.
    const detections = (stats.consumer ?? []).filter((r) => r.type === 'DETECTIONS');
    const sent = receiver.received
      .map((r) => JSON.parse(r.body) as { type: string; data: { local: unknown[] } })
      .filter((b) => b.type === 'DETECTIONS')
      .reduce((a, b) => a + b.data.local.length, 0);
    expect(detections.reduce((a, r) => a + (r.value as number), 0)).toBe(sent);
  });

  it('refuses a declared storm above the bound or with nothing to be about, at its place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-storm-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const start = (storm: WebhookStorm, eventTypes: string[]) =>
      startWebhooks(
        { webhooks: sqliteWebhookStore(join(dir, `${storm.rate}.sqlite`)), events: NO_EVENTS },
        catalogue(),
        new VirtualClock(T0),
        {
          seed: 3,
          allow: ['127.0.0.1/8'],
          declared: [
            {
              orgId: 'org_1',
              src: 'storm.yaml webhooks[0]',
              input: { name: 'stormy', eventTypes, url: 'http://127.0.0.1:9/', secret: SECRET },
              storm,
            },
          ],
        },
      );
    await expect(start({ rate: 50_001 }, ['DETECTIONS'])).rejects.toThrow(
      /storm\.yaml webhooks\[0\]\.storm\.rate: an integer number of events per second in 1\.\.50000/,
    );
    const filtered = startWebhooks(
      { webhooks: sqliteWebhookStore(join(dir, 'f.sqlite')), events: NO_EVENTS },
      catalogue(),
      new VirtualClock(T0),
      {
        seed: 3,
        allow: ['127.0.0.1/8'],
        declared: [
          {
            orgId: 'org_1',
            src: 'storm.yaml webhooks[0]',
            input: {
              name: 'stormy',
              eventTypes: ['FLOOR_OCCUPANCY'],
              url: 'http://127.0.0.1:9/',
              secret: SECRET,
              filters: { room_ids: [ROOM_A] },
            },
            storm: { rate: 10 },
          },
        ],
      },
    );
    await expect(filtered).rejects.toThrow(AppError);
    await expect(filtered).rejects.toThrow(/storm\.yaml webhooks\[0\]\.storm\.types: .*FLOOR_OCCUPANCY/);
  });
});

/** An empty occupancy event outbox. */
const NO_EVENTS = { events: () => Promise.resolve([]), close: () => Promise.resolve() };
