import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { SensorPacket } from '../../src/edge/packet.js';
import { hiveShareModel, shareHives } from '../../src/hive/hive-threads.js';
import { packEdgePackets } from '../../src/edge/edge-packets.js';
import { HeldPackets, nextPacket } from '../../src/hive/packet-transfer.js';
import { UplinkPackets } from '../../src/proto/uplink-wire.js';
import { toWire } from '../../src/hive/delivery.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioObject } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { storedRunText } from '../support/stored-series.js';

const dir = mkdtempSync(join(tmpdir(), 'occusim-hive-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// office-day: three hives on three floors; a broker restart crosses the run/hive-thread boundary.
const doc = parse(readFileSync(new URL('../../scenarios/office-day.yaml', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;
const loaded = loadScenarioObject(
  { ...doc, duration: '25m', faults: [{ kind: 'broker_restart', at: '9m' }] },
  'office-day+faults',
);
if (!loaded.ok) throw new Error('office-day does not load');
const model: ScenarioModel = loaded.model;

describe('hives simulated in worker threads', () => {
  it('give a byte-identical result, stored series and event outbox at 0, 1, 2 and 3 hive threads, platform in either thread', async () => {
    expect(model.hives.length).toBe(3);
    const layouts = [
      { hiveThreads: 0, platformThread: false },
      { hiveThreads: 1, platformThread: true },
      { hiveThreads: 2, platformThread: true },
      { hiveThreads: 3, platformThread: false },
    ] as const;
    const runs = [];
    for (const layout of layouts) {
      const db = join(dir, `h${layout.hiveThreads}-${layout.platformThread}.sqlite`);
      const report = await runScenario(model, { ...layout, dbPath: db });
      expect(report.perf.hiveThreads).toBe(layout.hiveThreads);
      runs.push({ result: JSON.stringify(report.result), stored: storedRunText(db, model) });
    }
    const first = runs[0];
    expect(JSON.parse(first?.result ?? '{}').delivery.brokerRestarts).toBe(1);
    for (const r of runs.slice(1)) {
      expect(r.result).toBe(first?.result);
      expect(r.stored).toBe(first?.stored);
    }
  }, 240_000);

  it('refuses a hive thread count out of range, before the run', async () => {
    await expect(runScenario(model, { hiveThreads: -1 })).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('shareHives', () => {
  it('deals every hive once, in scenario order, in contiguous shares', () => {
    for (const n of [1, 2, 3, 5]) {
      const shares = shareHives(model, n);
      expect(shares.flat()).toEqual(model.hives.map((h) => h.id));
      expect(shares.length).toBe(Math.min(n, model.hives.length));
      expect(shares.every((s) => s.length > 0)).toBe(true);
    }
  });
});

describe('hiveShareModel', () => {
  it('gives a hive thread its hives, their sensors in scenario order and their floors’ rooms, and none of the people', () => {
    const [first, ...rest] = shareHives(model, 2);
    const share = hiveShareModel(model, first ?? []);
    const ids = new Set(first);
    expect(share.hives.map((h) => h.id)).toEqual(first);
    expect(share.sensors.map((s) => s.id)).toEqual(model.sensors.filter((s) => ids.has(s.hiveId)).map((s) => s.id));
    expect(share.sensors.map((s) => [s.mac, s.center, s.mode, s.reportIntervalMs])).toEqual(
      model.sensors.filter((s) => ids.has(s.hiveId)).map((s) => [s.mac, s.center, s.mode, s.reportIntervalMs]),
    );
    const floors = new Set(share.floors.map((f) => f.id));
    expect(share.rooms.map((r) => r.id)).toEqual(model.rooms.filter((r) => floors.has(r.floorId)).map((r) => r.id));
    expect(share.populations).toEqual([]);
    expect([share.seed, share.startMs, share.durationMs, share.batchIntervalMs, share.faults, share.network]).toEqual([
      model.seed,
      model.startMs,
      model.durationMs,
      model.batchIntervalMs,
      model.faults,
      model.network,
    ]);
    expect(rest.length).toBeGreaterThan(0);
  });
});

describe('the packet hand-off to a hive thread', () => {
  const sensors = Array.from({ length: 8 }, (_, i) => ({ id: `s${i}` })) as unknown as ScenarioModel['sensors'];
  const double = fc.double({ noNaN: true, noDefaultInfinity: true });
  const packet = fc.oneof(
    fc.record({
      kind: fc.constant('presence' as const),
      sensor: fc.nat(7),
      sensedAtMs: fc.nat(),
      detections: fc.array(fc.tuple(double, double), { maxLength: 6 }),
    }),
    fc.record({
      kind: fc.constant('traffic' as const),
      sensor: fc.nat(7),
      sensedAtMs: fc.nat(),
      intervalMs: fc.nat(),
      in: fc.nat(),
      out: fc.nat(),
    }),
  );

  it('holds a buffer while any of its packets is in flight, gives back each packet as the wire carries it, taken in any order, and releases the buffer once its last packet is taken (fast-check seed 12)', () => {
    const macs = sensors.map((s, i) => ({ ...s, mac: `m${i}` }));
    fc.assert(
      fc.property(
        fc.array(fc.array(packet, { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 50 }),
        fc.nat(),
        (buffers, slice, shuffle) => {
          const held = new HeldPackets(macs);
          const inFlight: Array<{ handle: number; wire: unknown; buffer: number }> = [];
          const left = buffers.map((b) => b.length);
          const released: number[] = [];
          for (const [b, specs] of buffers.entries()) {
            const packets: SensorPacket[] = specs.map(({ sensor, ...p }) => ({ ...p, sensorId: `s${sensor}` }));
            const buf = packEdgePackets(packets, (id) => Number(id.slice(1))).data;
            // Submitted a slice at a time, as a hive thread does: one hold per slice of the same buffer.
            let k = 0;
            for (let at = 0; at < buf.length;) {
              const hold = held.hold(buf, () => released.push(b));
              for (let n = 0; n < slice && at < buf.length; n++, k++) {
                inFlight.push({
                  handle: hold.handle(at),
                  wire: toWire(packets[k] as SensorPacket, `m${specs[k]!.sensor}`),
                  buffer: b,
                });
                hold.sent();
                at = nextPacket(buf, at);
              }
              hold.done(at >= buf.length);
            }
            expect(k).toBe(packets.length);
          }
          expect(held.inFlight).toBe(inFlight.length);
          // Taken in an order unrelated to the one sent in (frames reach their hives in arrival order).
          const order = inFlight
            .map((_, i) => i)
            .sort((a, b) => ((a * 7919 + shuffle) % 101) - ((b * 7919 + shuffle) % 101) || a - b);
          expect(released).toEqual([]);
          for (const i of order) {
            const { handle, wire, buffer } = inFlight[i]!;
            expect(held.take(handle)).toEqual(wire);
            left[buffer] = left[buffer]! - 1;
            // Released exactly when its last packet has been read, never before.
            expect(released.filter((r) => r === buffer)).toHaveLength(left[buffer] === 0 ? 1 : 0);
          }
          expect(released.toSorted((a, c) => a - c)).toEqual(buffers.map((_, i) => i));
          expect(held.inFlight).toBe(0);
          expect(() => held.take(inFlight[0]!.handle)).toThrow(/no buffer/);
        },
      ),
      { seed: 12, numRuns: 200 },
    );
  });

  it("writes each packet into a hive's next batches as the wire carries it, the bytes of the packet it takes (fast-check seed 13)", () => {
    const macs = sensors.map((s, i) => ({ ...s, mac: `aa:bb:cc:dd:ee:0${i}` }));
    fc.assert(
      fc.property(fc.array(packet, { minLength: 1, maxLength: 40 }), (specs) => {
        const packets: SensorPacket[] = specs.map(({ sensor, ...p }) => ({ ...p, sensorId: `s${sensor}` }));
        const buf = packEdgePackets(packets, (id) => Number(id.slice(1))).data;
        const [encoded, objects] = [new HeldPackets(macs), new HeldPackets(macs)].map((held, k) => {
          const hold = held.hold(buf, () => undefined);
          const handles: number[] = [];
          for (let at = 0; at < buf.length; at = nextPacket(buf, at)) {
            handles.push(hold.handle(at));
            hold.sent();
          }
          hold.done(true);
          const out = new UplinkPackets();
          for (const h of handles) {
            if (k === 0) held.takeInto(h, out);
            else out.push(held.take(h));
          }
          expect(held.inFlight).toBe(0);
          expect(Array.from(out.sensedAtMs(0, out.count))).toEqual(packets.map((p) => p.sensedAtMs));
          return Buffer.from(out.bytes(0, out.count)).toString('hex');
        });
        expect(encoded).toBe(objects);
      }),
      { seed: 13, numRuns: 200 },
    );
  });
});
