import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/cloud/events.js';
import type { DeliveryInsert } from '../../src/store/webhook-port.js';
import { bodyOf, FanOut } from '../../src/webhooks/fan-out.js';
import type { Subscription } from '../../src/webhooks/subscription.js';
import { bareId } from '../../src/core/ids.js';

const SEED = 1212;

const room: EventEnvelope = {
  id: 'event_r',
  type: 'ROOM_OCCUPANCY_1M',
  timestamp: 60_000,
  version: 'v1.0.0',
  metadata: { org_id: 'org_1', floor_id: 'space_1', room_id: 'room_1' },
  data: 2,
};

describe('webhook request body', () => {
  it('is the envelope as JSON.stringify writes it, sensor ids bare in the metadata', () => {
    const e = room;
    expect(bodyOf(e)).toBe(JSON.stringify(e));
    const sensor: EventEnvelope = {
      id: 'event_s',
      type: 'TRAFFIC',
      timestamp: 5,
      version: 'v1.0.0',
      metadata: { org_id: 'org_1', sensor_id: 'sensor_ab12' },
      data: { in: 1, out: 0 },
    };
    expect(JSON.parse(bodyOf(sensor))).toEqual({ ...sensor, metadata: { org_id: 'org_1', sensor_id: 'ab12' } });
    expect(bodyOf({ ...sensor, data: { local: [[0.5, 0.25]], world: [[1.5, 2]] } })).toBe(
      JSON.stringify({
        ...sensor,
        metadata: { org_id: 'org_1', sensor_id: 'ab12' },
        data: { local: [[0.5, 0.25]], world: [[1.5, 2]] },
      }),
    );
  });

  it('is byte for byte what JSON.stringify of the envelope object writes, for any id, type, instant, metadata and data (cached pieces included)', () => {
    console.log(`fast-check seed ${SEED}`);
    // The object the body stands for: metadata with the sensor id bare, data null when absent.
    const reference = (e: EventEnvelope): string =>
      JSON.stringify({
        id: e.id,
        type: e.type,
        timestamp: e.timestamp,
        version: e.version,
        metadata:
          e.metadata.sensor_id === undefined ? e.metadata : { ...e.metadata, sensor_id: bareId(e.metadata.sensor_id) },
        data: e.data === undefined ? null : e.data,
      });
    const text = fc.string({ unit: 'binary', maxLength: 30 });
    const key = fc.oneof(text, fc.constantFrom('org_id', 'room_id', 'sensor_id', 'mac_address', '__proto__', '1', '0'));
    const metadata = fc.dictionary(key, text, { maxKeys: 8 });
    const number = fc.oneof(
      fc.double(),
      fc.integer(),
      fc.constantFrom(0, -0, 1e21, 1e-7, 2 ** 53, NaN, Infinity, -Infinity, 1_700_000_000_000),
    );
    const data = fc.oneof(
      number,
      fc.jsonValue(),
      fc.constant(undefined),
      fc.record({ in: fc.nat(), out: fc.nat() }),
      fc.record({
        local: fc.array(fc.tuple(fc.double(), fc.double())),
        world: fc.array(fc.tuple(fc.double(), fc.double())),
      }),
    );
    // A few shared metadata objects and types, so the per-object and per-type texts are reused.
    const shared = fc.array(metadata, { minLength: 1, maxLength: 3 });
    const types = fc.array(fc.oneof(fc.constantFrom('ROOM_OCCUPANCY', 'DETECTIONS', 'TRAFFIC'), text), {
      minLength: 1,
      maxLength: 3,
    });
    fc.assert(
      fc.property(
        shared,
        types,
        fc.array(fc.tuple(text, fc.nat(), fc.nat(), number, fc.constantFrom('v1.0.0', 'v2'), data), {
          minLength: 1,
          maxLength: 6,
        }),
        (metas, typeList, events) => {
          for (const [id, t, m, timestamp, version, d] of events) {
            const e: EventEnvelope = {
              id,
              type: typeList[t % typeList.length] as string,
              timestamp,
              version,
              metadata: metas[m % metas.length] as Record<string, string>,
              data: d,
            };
            expect(bodyOf(e)).toBe(reference(e));
          }
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });
});

describe('webhook fan-out', () => {
  const sub = (id: string, orgId: string, filters: Subscription['filters'] = {}): Subscription =>
    ({
      id,
      orgId,
      name: id,
      eventTypes: ['ROOM_OCCUPANCY_1M'],
      status: 'ENABLED',
      filters,
      sendOnValueChange: false,
      endpoint: { url: 'https://x.test/h', httpTimeoutS: 10, apiKey: null, basicAuth: null },
      secrets: [],
      failingSinceMs: null,
      disabledReason: null,
    }) as unknown as Subscription;

  it("gives a subscription its own organisation's events only, with no filters or filters naming the other's ids (issue 16)", () => {
    const out: DeliveryInsert[] = [];
    new FanOut().deliveries(
      [
        sub('mine', 'org_1'),
        sub('unfiltered', 'org_2'),
        sub('names-theirs', 'org_2', { org_ids: ['org_1'], room_ids: ['room_1'] }),
      ],
      room,
      0,
      0,
      out,
    );
    expect(out.map((d) => d.subscriptionId)).toEqual(['mine']);
  });
});
