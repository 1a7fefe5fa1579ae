import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/cloud/store/port.js';

/**
 * The contract every `Store` adapter passes (SQLite today; a PostgreSQL adapter runs the
 * same suite): the pipeline relies on nothing else.
 */
const T = Date.UTC(2026, 2, 3, 8, 0);
const MIN = 60_000;

export function describeStoreContract(name: string, open: () => Store): void {
  describe(`${name} store contract`, () => {
    it('stores a batch atomically with its ack progress and finds it again', () => {
      const s = open();
      expect(s.hasBatch('HV1', 1)).toBe(false);
      expect(s.ackedSeq('HV1')).toBe(0);
      s.writeBatch({
        hiveSerial: 'HV1',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        presence: [{ sensorId: 'sensor_a', sensedAtMs: T + 1000, detections: [[0.5, 0.25]] }],
        traffic: [{ sensorId: 'sensor_t', sensedAtMs: T + 2000, intervalMs: 10_000, in: 2, out: 1 }],
        deadLetters: [],
      });
      expect(s.hasBatch('HV1', 1)).toBe(true);
      expect(s.ackedSeq('HV1')).toBe(1);
      expect(s.presencePacketsInMinute(T)).toEqual([{ sensorId: 'sensor_a', sensedAtMs: T + 1000, detections: [[0.5, 0.25]] }]);
      expect(s.trafficPacketsSince(T)).toEqual([{ sensorId: 'sensor_t', sensedAtMs: T + 2000, intervalMs: 10_000, in: 2, out: 1 }]);
      expect(s.presencePacketsSince(T + MIN)).toEqual([]);
      s.close();
    });

    it('lists dead letters in the order they were stored', () => {
      const s = open();
      for (const reason of ['DECODE_FAILED', 'UNKNOWN_HIVE'] as const) s.writeDeadLetter({ receivedAtMs: T, topic: 't', reason, message: reason, payload: new Uint8Array([1]) });
      expect(s.deadLetters().map((d) => d.reason)).toEqual(['DECODE_FAILED', 'UNKNOWN_HIVE']);
      s.close();
    });

    it('replaces minutes, rolls them up by max and serves every interval', () => {
      const s = open();
      s.writePresenceMinutes([0, 1, 2].map((m) => ({ spaceId: 'room_a', minuteMs: T + m * MIN, value: m, samples: 60 })));
      s.writePresenceMinutes([{ spaceId: 'room_a', minuteMs: T + MIN, value: 7, samples: 60 }]);
      s.refreshRollups([{ spaceId: 'room_a', level: '5m', startMs: T, endMs: T + 5 * MIN }]);
      expect(s.presenceSeries('room_a', '1m', T, T + 5 * MIN).map((p) => p.value)).toEqual([0, 7, 2]);
      expect(s.presenceSeries('room_a', '5m', T, T + 5 * MIN)).toEqual([{ bucketMs: T, value: 7 }]);
      s.prune({ '1m': T + 2 * MIN });
      expect(s.presenceSeries('room_a', '1m', T, T + 5 * MIN).map((p) => p.value)).toEqual([2]);
      expect(s.presenceSeries('room_a', '5m', T, T + 5 * MIN)).toEqual([{ bucketMs: T, value: 7 }]); // coarser data outlives the minutes
      s.close();
    });

    it('keeps the event outbox in order and reads it from an id on', () => {
      const s = open();
      s.writeEvents([0, 1, 2].map((revision) => ({ type: 'ROOM_OCCUPANCY_1M', spaceId: 'room_a', minuteMs: T, value: revision, revision, emittedAtMs: T + revision })));
      const all = s.events();
      expect(all.map((e) => e.revision)).toEqual([0, 1, 2]);
      expect(s.events(all[0]?.id).map((e) => e.revision)).toEqual([1, 2]);
      s.close();
    });

    it('keeps pipeline state and assets', () => {
      const s = open();
      expect(s.getState('finalised_before')).toBeUndefined();
      s.setState('finalised_before', T);
      expect(s.getState('finalised_before')).toBe(T);
      s.writeAssets([{ id: 'room_a', kind: 'room', parentId: 'space_1', name: 'A', timezone: 'Asia/Kolkata' }]);
      expect(s.assets()).toEqual([{ id: 'room_a', kind: 'room', parentId: 'space_1', name: 'A', timezone: 'Asia/Kolkata' }]);
      s.close();
    });
  });
}
