import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { CloudPipeline } from '../../src/cloud/pipeline.js';
import { sqliteStore } from '../../src/store/sqlite-async.js';
import { VirtualClock } from '../../src/core/clock.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { encodeUplink } from '../../src/proto/codec.js';
import type { WirePacket } from '../../src/proto/messages.js';
import {
  FLOOR,
  HIVE_SERIAL,
  presenceAt,
  ROOM_A,
  ROOM_B,
  SENSOR_PA,
  SENSOR_PB,
  SENSOR_T,
  T0,
  tinyModel,
  trafficAt,
} from './fixture.js';

const MIN = 60_000;

/**
 * Two ingest processes' pipelines on one store file: A aggregates no floor, B the fixture's
 * floor. Whatever A stores and acks, B reads back from the store before each new minute's
 * recompute, so the stored minutes are the one-process pipeline's, and A writes none.
 */
function packetsOf(minute: number): WirePacket[] {
  const t = T0 + minute * MIN;
  return [
    presenceAt(SENSOR_PA, t, [[7, 5]]),
    presenceAt(SENSOR_PB, t, minute % 2 === 0 ? [[12, 5]] : []),
    trafficAt(SENSOR_T, t + 1000, minute, 1),
  ];
}

async function run(split: boolean): Promise<{
  presence: unknown[];
  rollups: unknown[];
  traffic: unknown[];
  counters: Array<Record<string, number>>;
  marksLeft: unknown[];
}> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-partition-'));
  try {
    const path = join(dir, 'store.sqlite');
    const model = tinyModel();
    const clock = new VirtualClock(T0);
    const pipeline = (owns: boolean | null) =>
      new CloudPipeline({
        catalogue: catalogueFromScenario(model),
        tickMs: model.tickMs,
        store: sqliteStore(path),
        clock,
        lookbackMs: 5 * MIN,
        ...(owns === null ? {} : { partition: { self: owns ? '2/2' : '1/2', ownerOf: () => '2/2' } }),
      });
    const [a, b] = split ? [pipeline(false), pipeline(true)] : [pipeline(null), null];
    for (let m = 0; m < 12; m++) {
      clock.advanceTo(T0 + (m + 1) * MIN);
      // Every other batch lands on the process that does not own the floor.
      const to = split && m % 2 === 0 ? (b as CloudPipeline) : a;
      expect(
        (
          await to.handleMessage(
            uplinkTopic(HIVE_SERIAL),
            encodeUplink({ hiveSerial: HIVE_SERIAL, seq: m + 1, sentAtMs: T0, packets: packetsOf(m) }),
          )
        )?.ackedSeq,
      ).toBe(m + 1);
      for (const p of [a, b]) await p?.advance(T0 + (m + 1) * MIN);
      if (m === 3) {
        // Late within the look-back: minute 1, already computed by the owner, gains an instant, stored by the other process.
        const late = [
          presenceAt(SENSOR_PB, T0 + MIN + 30_000, [
            [12, 5],
            [13, 5],
          ]),
          presenceAt(SENSOR_PA, T0 + MIN + 30_000, [[7, 5]]),
        ];
        await a.handleMessage(
          uplinkTopic(HIVE_SERIAL),
          encodeUplink({ hiveSerial: HIVE_SERIAL, seq: 100, sentAtMs: T0, packets: late }),
        );
      }
      if (m === 9) {
        // Late beyond the look-back: minute 2 (finalised by the owner) gains an instant, stored by the other process,
        // which marks the minute for the owner to reopen at its next recompute.
        const late = [
          presenceAt(SENSOR_PB, T0 + 2 * MIN + 30_000, [
            [12, 5],
            [13, 5],
          ]),
          presenceAt(SENSOR_PA, T0 + 2 * MIN + 30_000, [[7, 5]]),
        ];
        await a.handleMessage(
          uplinkTopic(HIVE_SERIAL),
          encodeUplink({ hiveSerial: HIVE_SERIAL, seq: 101, sentAtMs: T0, packets: late }),
        );
      }
    }
    for (const p of [a, b]) await p?.finish();
    const s = sqliteStore(path).sync;
    const out = {
      presence: [ROOM_A, ROOM_B, FLOOR].flatMap((id) => s.presenceMinutes(id)),
      rollups: [ROOM_A, ROOM_B, FLOOR].flatMap((id) => s.presenceSeries(id, '5m', T0, T0 + 15 * MIN)),
      traffic: s.trafficMinutes(SENSOR_T.id),
      counters: [a, b].flatMap((p) => (p ? [p.counters() as unknown as Record<string, number>] : [])),
      marksLeft: s.reopenMarks('2/2'),
    };
    s.close();
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a floor partition over two pipelines', () => {
  it("stores the one-process pipeline's minutes when the floor's batches land on both", async () => {
    const one = await run(false);
    const two = await run(true);
    expect(one.presence.length).toBe(36);
    // The late instant changed minute 1 (one process revises it within the look-back).
    expect(
      (one.presence as Array<{ minuteMs: number; samples: number }>)
        .filter((r) => r.minuteMs === T0 + MIN)
        .map((r) => r.samples),
    ).toEqual([2, 2, 2]);
    // The one beyond the look-back reopened minute 2 (one process reopens it from the store).
    expect(
      (one.presence as Array<{ minuteMs: number; samples: number }>)
        .filter((r) => r.minuteMs === T0 + 2 * MIN)
        .map((r) => r.samples),
    ).toEqual([2, 2, 2]);
    expect(one.counters[0]?.lateBeyondWindow).toBe(2);
    // The owner reopened it from the other process's mark: the same minutes and rollups, no mark left.
    expect(two.presence).toEqual(one.presence);
    expect(two.rollups).toEqual(one.rollups);
    expect(two.counters[1]?.lateBeyondWindow).toBeGreaterThan(0);
    expect(two.marksLeft).toEqual([]);
    expect(two.traffic).toEqual(one.traffic);
    // Each stored and acked its own batches; only the owner aggregated (its events), the other computed nothing.
    expect(two.counters.map((c) => c.batchesProcessed)).toEqual([8, 6]);
    expect(two.counters.map((c) => c.packetsProcessed)).toEqual([22, 18]);
    expect(two.counters[0]?.eventsEmitted).toBe(0);
    expect(two.counters[1]?.eventsEmitted).toBe(one.counters[0]?.eventsEmitted);
  });
});
