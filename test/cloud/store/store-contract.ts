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
    it('stores a batch atomically with its ack progress and finds its payload by sensing span', () => {
      const s = open();
      expect(s.hasBatch('HV1', 1)).toBe(false);
      expect(s.ackedSeq('HV1')).toBe(0);
      const payload = Uint8Array.from([1, 2, 3]);
      s.writeBatch({ hiveSerial: 'HV1', seq: 1, sentAtMs: T, receivedAtMs: T, ackedSeq: 1, packetCount: 2, raw: { payload, minSensedMs: T + 1000, maxSensedMs: T + 2000 }, deadLetters: [] });
      s.writeBatch({ hiveSerial: 'HV1', seq: 2, sentAtMs: T, receivedAtMs: T, ackedSeq: 2, packetCount: 1, raw: null, deadLetters: [] });
      expect(s.hasBatch('HV1', 1)).toBe(true);
      expect(s.hasBatch('HV1', 2)).toBe(true);
      expect(s.ackedSeq('HV1')).toBe(2);
      expect(s.payloadsSensedIn(T, T + MIN)).toEqual([{ hiveSerial: 'HV1', seq: 1, payload }]);
      expect(s.payloadsSensedIn(T + 2000, T + 2001)).toHaveLength(1); // the span's end is inside
      expect(s.payloadsSensedIn(T + 2001, T + MIN)).toEqual([]);
      expect(s.payloadsSensedIn(T - MIN, T + 1000)).toEqual([]); // the span starts at the range's end
      s.close();
    });

    it('returns payloads in arrival order and forgets them with the minutes', () => {
      const s = open();
      for (const seq of [3, 1, 2]) s.writeBatch({ hiveSerial: 'HV1', seq, sentAtMs: T, receivedAtMs: T, ackedSeq: 0, packetCount: 1, raw: { payload: Uint8Array.from([seq]), minSensedMs: T + seq * MIN, maxSensedMs: T + seq * MIN }, deadLetters: [] });
      expect(s.payloadsSensedIn(T, T + 10 * MIN).map((p) => p.seq)).toEqual([3, 1, 2]);
      s.prune({ '1m': T + 2 * MIN });
      expect(s.payloadsSensedIn(T, T + 10 * MIN).map((p) => p.seq)).toEqual([3, 2]);
      expect(s.hasBatch('HV1', 1)).toBe(true); // (hive, seq) dedupe outlives the payload
      s.close();
    });

    it('keeps the latest heartbeat per hive and the latest health and last-seen instant per sensor', () => {
      const s = open();
      expect(s.hiveStatus('hive_1')).toBeNull();
      expect(s.sensorStatus('sensor_a')).toBeNull();
      const hb = { hiveId: 'hive_1', hiveSerial: 'HV1', lastHeartbeatMs: T, sentAtMs: T - 5, state: 'streaming' as const, firmwareVersion: '1.4.2', protocolMinor: 1, uptimeMs: 1000, netPathStability: 0.9, ackedSeq: 4, nextSeq: 5, bufferedBatches: 0, bufferedBytes: 0, droppedPackets: 0 };
      const health = { sensorId: 'sensor_a', measuredAtMs: T - 10, batteryLevel: 0.5, batteryRuntimeS: 86_400, rssiDbm: -70, linkPdr: 0.97, uptimeMs: 500, parent: 'HV1', hops: 1, queueOverflows: 0 };
      s.writeHeartbeat(hb, [health]);
      s.writeHeartbeat({ ...hb, lastHeartbeatMs: T + MIN, state: 'catching_up' }, []);
      expect(s.hiveStatus('hive_1')).toEqual({ ...hb, lastHeartbeatMs: T + MIN, state: 'catching_up' });
      const { measuredAtMs, ...fields } = health;
      expect(s.sensorStatus('sensor_a')).toEqual({ ...fields, lastSeenMs: measuredAtMs, healthAtMs: measuredAtMs });
      // Data packets move last seen forward (never back) and keep the health fields.
      s.writeBatch({ hiveSerial: 'HV1', seq: 1, sentAtMs: T, receivedAtMs: T, ackedSeq: 1, packetCount: 1, raw: null, deadLetters: [], sensorsSeen: [{ sensorId: 'sensor_a', lastSeenMs: T + 5000 }, { sensorId: 'sensor_b', lastSeenMs: T }] });
      s.writeBatch({ hiveSerial: 'HV1', seq: 2, sentAtMs: T, receivedAtMs: T, ackedSeq: 2, packetCount: 1, raw: null, deadLetters: [], sensorsSeen: [{ sensorId: 'sensor_a', lastSeenMs: T }] });
      expect(s.sensorStatus('sensor_a')).toEqual({ ...fields, lastSeenMs: T + 5000, healthAtMs: measuredAtMs });
      expect(s.sensorStatus('sensor_b')).toEqual({ sensorId: 'sensor_b', lastSeenMs: T, healthAtMs: null, batteryLevel: null, batteryRuntimeS: null, rssiDbm: null, linkPdr: null, uptimeMs: null, parent: null, hops: null, queueOverflows: null });
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

    it('sums traffic minutes into rollup buckets and serves them like presence', () => {
      const s = open();
      s.writeTrafficMinutes([0, 1, 7].map((m) => ({ sensorId: 'sensor_t', minuteMs: T + m * MIN, in: m + 1, out: 1 })));
      s.refreshRollups([0, 5].map((k) => ({ kind: 'traffic' as const, spaceId: 'sensor_t', level: '5m' as const, startMs: T + k * MIN, endMs: T + (k + 5) * MIN })));
      expect(s.trafficSeries('sensor_t', '5m', T, T + 10 * MIN)).toEqual([{ bucketMs: T, in: 3, out: 2 }, { bucketMs: T + 5 * MIN, in: 8, out: 1 }]);
      expect(s.trafficSeries('sensor_t', '1m', T, T + 2 * MIN)).toEqual([{ bucketMs: T, in: 1, out: 1 }, { bucketMs: T + MIN, in: 2, out: 1 }]);
      expect(s.presenceSeries('sensor_t', '5m', T, T + 10 * MIN)).toEqual([]); // kinds stay apart
      s.close();
    });

    it('keeps the event outbox in order and reads it from an id on', () => {
      const s = open();
      s.writeEvents([0, 1, 2].map((revision) => ({ eventId: `event_${revision}`, type: 'ROOM_OCCUPANCY_1M', spaceId: 'room_a', minuteMs: T, value: revision, revision, emittedAtMs: T + revision })));
      const all = s.events();
      expect(all.map((e) => e.revision)).toEqual([0, 1, 2]);
      expect(all.map((e) => e.eventId)).toEqual(['event_0', 'event_1', 'event_2']);
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
