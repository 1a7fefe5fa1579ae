import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/port.js';

/**
 * The contract every `Store` adapter passes (sqlite-contract.test.ts, postgres-contract.test.ts):
 * the pipeline, the platform and the report rely on nothing else. Each test opens a new empty store.
 */
const T = Date.UTC(2026, 2, 3, 8, 0);
const MIN = 60_000;

export function describeStoreContract(name: string, open: () => Promise<Store>, skip: string | null = null): void {
  describe.skipIf(skip !== null)(`${name} store contract`, () => {
    it('stores a batch atomically with its ack progress and finds its payload by sensing span', async () => {
      const s = await open();
      expect(await s.hasBatch('HV1', 1)).toBe(false);
      expect(await s.ackedSeq('HV1')).toBe(0);
      const payload = Uint8Array.from([1, 2, 3]);
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        packetCount: 2,
        raw: { payload, minSensedMs: T + 1000, maxSensedMs: T + 2000 },
        deadLetters: [],
      });
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 2,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 2,
        packetCount: 1,
        raw: null,
        deadLetters: [],
      });
      expect(await s.hasBatch('HV1', 1)).toBe(true);
      expect(await s.hasBatch('HV1', 2)).toBe(true);
      expect(await s.ackedSeq('HV1')).toBe(2);
      expect(await s.payloadsSensedIn(T, T + MIN)).toEqual([{ hiveSerial: 'HV1', seq: 1, receivedAtMs: T, payload }]);
      expect(await s.payloadsSensedIn(T + 2000, T + 2001)).toHaveLength(1); // the span's end is inside
      expect(await s.payloadsSensedIn(T + 2001, T + MIN)).toEqual([]);
      expect(await s.payloadsSensedIn(T - MIN, T + 1000)).toEqual([]); // the span starts at the range's end
      await s.close();
    });

    it('returns payloads in arrival order and forgets them with the minutes', async () => {
      const s = await open();
      for (const seq of [3, 1, 2])
        await s.writeBatch({
          hiveSerial: 'HV1',
          seq,
          sentAtMs: T,
          receivedAtMs: T,
          ackedSeq: 0,
          packetCount: 1,
          raw: { payload: Uint8Array.from([seq]), minSensedMs: T + seq * MIN, maxSensedMs: T + seq * MIN },
          deadLetters: [],
        });
      expect((await s.payloadsSensedIn(T, T + 10 * MIN)).map((p) => p.seq)).toEqual([3, 1, 2]);
      await s.prune({ '1m': T + 2 * MIN });
      expect((await s.payloadsSensedIn(T, T + 10 * MIN)).map((p) => p.seq)).toEqual([3, 2]);
      expect(await s.hasBatch('HV1', 1)).toBe(true); // (hive, seq) dedupe outlives the payload
      await s.close();
    });

    it('keeps the latest heartbeat per hive and the latest health and last-seen instant per sensor', async () => {
      const s = await open();
      expect(await s.hiveStatus('hive_1')).toBeNull();
      expect(await s.sensorStatus('sensor_a')).toBeNull();
      const hb = {
        hiveId: 'hive_1',
        hiveSerial: 'HV1',
        lastHeartbeatMs: T,
        sentAtMs: T - 5,
        state: 'streaming' as const,
        firmwareVersion: '1.4.2',
        protocolMinor: 1,
        uptimeMs: 1000,
        netPathStability: 0.9,
        ackedSeq: 4,
        nextSeq: 5,
        bufferedBatches: 0,
        bufferedBytes: 0,
        droppedPackets: 0,
      };
      const health = {
        sensorId: 'sensor_a',
        measuredAtMs: T - 10,
        batteryLevel: 0.5,
        batteryRuntimeS: 86_400,
        rssiDbm: -70,
        linkPdr: 0.97,
        uptimeMs: 500,
        parent: 'HV1',
        hops: 1,
        queueOverflows: 0,
      };
      await s.writeHeartbeat(hb, [health]);
      await s.writeHeartbeat({ ...hb, lastHeartbeatMs: T + MIN, state: 'catching_up' }, []);
      expect(await s.hiveStatus('hive_1')).toEqual({ ...hb, lastHeartbeatMs: T + MIN, state: 'catching_up' });
      const { measuredAtMs, ...fields } = health;
      expect(await s.sensorStatus('sensor_a')).toEqual({
        ...fields,
        lastSeenMs: measuredAtMs,
        healthAtMs: measuredAtMs,
      });
      // Data packets move last seen forward (never back) and keep the health fields.
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        packetCount: 1,
        raw: null,
        deadLetters: [],
        sensorsSeen: [
          { sensorId: 'sensor_a', lastSeenMs: T + 5000 },
          { sensorId: 'sensor_b', lastSeenMs: T },
        ],
      });
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 2,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 2,
        packetCount: 1,
        raw: null,
        deadLetters: [],
        sensorsSeen: [{ sensorId: 'sensor_a', lastSeenMs: T }],
      });
      expect(await s.sensorStatus('sensor_a')).toEqual({ ...fields, lastSeenMs: T + 5000, healthAtMs: measuredAtMs });
      expect(await s.sensorStatus('sensor_b')).toEqual({
        sensorId: 'sensor_b',
        lastSeenMs: T,
        healthAtMs: null,
        batteryLevel: null,
        batteryRuntimeS: null,
        rssiDbm: null,
        linkPdr: null,
        uptimeMs: null,
        parent: null,
        hops: null,
        queueOverflows: null,
      });
      await s.close();
    });

    it("applies a fleet hive's heartbeat and batch in order: a sensor named twice keeps its later health", async () => {
      const s = await open();
      const hb = {
        hiveId: 'hive_9',
        hiveSerial: 'HV9',
        lastHeartbeatMs: T,
        sentAtMs: T,
        state: 'streaming' as const,
        firmwareVersion: '1.4.2',
        protocolMinor: 1,
        uptimeMs: 1000,
        netPathStability: 1,
        ackedSeq: 0,
        nextSeq: 1,
        bufferedBatches: 0,
        bufferedBytes: 0,
        droppedPackets: 0,
      };
      const health = (i: number, battery: number, at = T + i) => ({
        sensorId: `sensor_${String(i).padStart(3, '0')}`,
        measuredAtMs: at,
        batteryLevel: battery,
        batteryRuntimeS: i,
        rssiDbm: -50 - i,
        linkPdr: 1,
        uptimeMs: i,
        parent: 'HV9',
        hops: 1,
        queueOverflows: 0,
      });
      // 70 entries (more than one multi-row statement), sensor_003 again at the end, measured earlier.
      await s.writeHeartbeat(hb, [...Array.from({ length: 69 }, (_, i) => health(i, 0.5)), health(3, 0.1, T - 1)]);
      await s.writeBatch({
        hiveSerial: 'HV9',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        packetCount: 40,
        raw: null,
        deadLetters: [],
        sensorsSeen: Array.from({ length: 40 }, (_, i) => ({
          sensorId: `sensor_${String(i).padStart(3, '0')}`,
          lastSeenMs: T + 10,
        })),
      });
      const rows = await s.sensorStatuses(Array.from({ length: 70 }, (_, i) => `sensor_${String(i).padStart(3, '0')}`));
      expect(rows.map((r) => r?.lastSeenMs ?? null)).toEqual(
        Array.from({ length: 70 }, (_, i) => (i === 69 ? null : Math.max(T + i, i < 40 ? T + 10 : 0))),
      );
      expect(rows[3]).toMatchObject({ batteryLevel: 0.1, healthAtMs: T - 1, lastSeenMs: T + 10 });
      expect(rows[68]).toMatchObject({ batteryLevel: 0.5, rssiDbm: -118, batteryRuntimeS: 68 });
      await s.close();
    });

    it("merges a sensor's status reported by two hives: last seen the latest, health the one measured last", async () => {
      const s = await open();
      const hb = (serial: string) => ({
        hiveId: `hive_${serial}`,
        hiveSerial: serial,
        lastHeartbeatMs: T,
        sentAtMs: T,
        state: 'streaming' as const,
        firmwareVersion: '1.4.2',
        protocolMinor: 1,
        uptimeMs: 1000,
        netPathStability: 1,
        ackedSeq: 0,
        nextSeq: 1,
        bufferedBatches: 0,
        bufferedBytes: 0,
        droppedPackets: 0,
      });
      const health = (at: number, battery: number) => ({
        sensorId: 'sensor_m',
        measuredAtMs: at,
        batteryLevel: battery,
        batteryRuntimeS: 1,
        rssiDbm: -60,
        linkPdr: 1,
        uptimeMs: 1,
        parent: 'HV1',
        hops: 1,
        queueOverflows: 0,
      });
      // Measured at the same instant by both: the greater hive serial's, whichever was written last.
      await s.writeHeartbeat(hb('HV2'), [health(T, 0.2)]);
      await s.writeHeartbeat(hb('HV1'), [health(T, 0.1)]);
      expect(await s.sensorStatus('sensor_m')).toMatchObject({ healthAtMs: T, batteryLevel: 0.2, lastSeenMs: T });
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        packetCount: 1,
        raw: null,
        deadLetters: [],
        sensorsSeen: [{ sensorId: 'sensor_m', lastSeenMs: T + 50 }],
      });
      await s.writeHeartbeat(hb('HV1'), [health(T + 10, 0.3)]);
      expect(await s.sensorStatuses(['sensor_m'])).toEqual([await s.sensorStatus('sensor_m')]);
      expect(await s.sensorStatus('sensor_m')).toMatchObject({
        healthAtMs: T + 10,
        batteryLevel: 0.3,
        lastSeenMs: T + 50,
        parent: 'HV1',
      });
      await s.close();
    });

    it('lists dead letters in the order they were stored', async () => {
      const s = await open();
      for (const reason of ['DECODE_FAILED', 'UNKNOWN_HIVE'] as const)
        await s.writeDeadLetter({ receivedAtMs: T, topic: 't', reason, message: reason, payload: new Uint8Array([1]) });
      expect((await s.deadLetters()).map((d) => d.reason)).toEqual(['DECODE_FAILED', 'UNKNOWN_HIVE']);
      await s.close();
    });

    it('replaces minutes, rolls them up by max and serves every interval', async () => {
      const s = await open();
      await s.writePresenceMinutes(
        [0, 1, 2].map((m) => ({ spaceId: 'room_a', minuteMs: T + m * MIN, value: m, samples: 60 })),
      );
      await s.writePresenceMinutes([{ spaceId: 'room_a', minuteMs: T + MIN, value: 7, samples: 60 }]);
      await s.refreshRollups([{ spaceId: 'room_a', level: '5m', startMs: T, endMs: T + 5 * MIN }]);
      expect((await s.presenceSeries('room_a', '1m', T, T + 5 * MIN)).map((p) => p.value)).toEqual([0, 7, 2]);
      expect(await s.presenceSeries('room_a', '5m', T, T + 5 * MIN)).toEqual([{ bucketMs: T, value: 7 }]);
      await s.prune({ '1m': T + 2 * MIN });
      expect((await s.presenceSeries('room_a', '1m', T, T + 5 * MIN)).map((p) => p.value)).toEqual([2]);
      expect(await s.presenceSeries('room_a', '5m', T, T + 5 * MIN)).toEqual([{ bucketMs: T, value: 7 }]); // coarser data outlives the minutes
      await s.close();
    });

    it('sums traffic minutes into rollup buckets and serves them like presence', async () => {
      const s = await open();
      await s.writeTrafficMinutes(
        [0, 1, 7].map((m) => ({ sensorId: 'sensor_t', minuteMs: T + m * MIN, in: m + 1, out: 1 })),
      );
      await s.refreshRollups(
        [0, 5].map((k) => ({
          kind: 'traffic' as const,
          spaceId: 'sensor_t',
          level: '5m' as const,
          startMs: T + k * MIN,
          endMs: T + (k + 5) * MIN,
        })),
      );
      expect(await s.trafficSeries('sensor_t', '5m', T, T + 10 * MIN)).toEqual([
        { bucketMs: T, in: 3, out: 2 },
        { bucketMs: T + 5 * MIN, in: 8, out: 1 },
      ]);
      expect(await s.trafficSeries('sensor_t', '1m', T, T + 2 * MIN)).toEqual([
        { bucketMs: T, in: 1, out: 1 },
        { bucketMs: T + MIN, in: 2, out: 1 },
      ]);
      expect(await s.presenceSeries('sensor_t', '5m', T, T + 10 * MIN)).toEqual([]); // kinds stay apart
      await s.close();
    });

    it('keeps the event outbox in order and reads it from an id on', async () => {
      const s = await open();
      await s.writeEvents(
        [0, 1, 2].map((revision) => ({
          eventId: `event_${revision}`,
          type: 'ROOM_OCCUPANCY_1M',
          spaceId: 'room_a',
          minuteMs: T,
          value: revision,
          revision,
          emittedAtMs: T + revision,
        })),
      );
      const all = await s.events();
      expect(all.map((e) => e.revision)).toEqual([0, 1, 2]);
      expect(all.map((e) => e.eventId)).toEqual(['event_0', 'event_1', 'event_2']);
      expect((await s.events(all[0]?.id)).map((e) => e.revision)).toEqual([1, 2]);
      await s.close();
    });

    it('stores an event emitted again (same id: a recompute replayed after a restart) once, in either write', async () => {
      const s = await open();
      const e = (i: number, value: number) => ({
        eventId: `event_${i}`,
        type: 'ROOM_OCCUPANCY_1M',
        spaceId: 'room_a',
        minuteMs: T,
        value,
        revision: i,
        emittedAtMs: T + MIN,
      });
      await s.writeEvents([e(0, 1), e(1, 2)]);
      await s.writeEvents([e(1, 2), e(2, 3), e(2, 3)]);
      await s.writeMinutes({ presence: [], traffic: [], events: [e(0, 1), e(3, 4)] });
      expect((await s.events()).map((x) => [x.eventId, x.value])).toEqual([
        ['event_0', 1],
        ['event_1', 2],
        ['event_2', 3],
        ['event_3', 4],
      ]);
      await s.close();
    });

    it("reads each space's last current-count event before an instant (crash recovery's record)", async () => {
      const s = await open();
      const at = (i: number, type: string, spaceId: string, t: number, value: number) => ({
        eventId: `event_${i}`,
        type,
        spaceId,
        minuteMs: t,
        value,
        revision: 0,
        emittedAtMs: t + MIN,
      });
      await s.writeEvents([
        at(0, 'ROOM_OCCUPANCY', 'room_a', T, 2),
        at(1, 'ROOM_OCCUPANCY', 'room_a', T + 30_000, 3),
        at(2, 'ROOM_OCCUPANCY_1M', 'room_a', T + MIN, 7), // a _1M value is no current count
        at(3, 'ZONE_OCCUPANCY', 'zone_b', T + 5_000, 0),
        at(4, 'ROOM_OCCUPANCY', 'room_a', T + 2 * MIN, 9), // at the instant asked: not before it
        at(5, 'FLOOR_OCCUPANCY', 'space_f', T + 3 * MIN, 4),
      ]);
      expect(await s.lastInstantCounts(T + 2 * MIN)).toEqual([
        { spaceId: 'room_a', value: 3 },
        { spaceId: 'zone_b', value: 0 },
      ]);
      expect(await s.lastInstantCounts(T)).toEqual([]);
      await s.close();
    });

    it('counts the outbox events of a minute range without reading them', async () => {
      const s = await open();
      expect(await s.eventCount(T, T + 10 * MIN)).toBe(0);
      await s.writeEvents(
        [0, 1, 1, 2, 9].map((m, i) => ({
          eventId: `event_${i}`,
          type: 'ROOM_OCCUPANCY_1M',
          spaceId: 'room_a',
          minuteMs: T + m * MIN,
          value: i,
          revision: 0,
          emittedAtMs: T + 10 * MIN,
        })),
      );
      expect(await s.eventCount(T, T + 2 * MIN)).toBe(3); // [from, to): the minute at `to` is out
      expect(await s.eventCount(T + MIN, T + 10 * MIN)).toBe(4);
      expect(await s.eventCount(T + 3 * MIN, T + 9 * MIN)).toBe(0);
      await s.close();
    });

    it('keeps pipeline state and assets', async () => {
      const s = await open();
      expect(await s.getState('finalised_before')).toBeUndefined();
      await s.setState('finalised_before', T);
      expect(await s.getState('finalised_before')).toBe(T);
      await s.writeAssets([{ id: 'room_a', kind: 'room', parentId: 'space_1', name: 'A', timezone: 'Asia/Kolkata' }]);
      expect(await s.assets()).toEqual([
        { id: 'room_a', kind: 'room', parentId: 'space_1', name: 'A', timezone: 'Asia/Kolkata' },
      ]);
      await s.close();
    });
    it('keeps reopen marks per owner until they are cleared; a mark recorded twice is one', async () => {
      const s = await open();
      const m = (owner: string, floorId: string, minuteMs: number) => ({ owner, floorId, minuteMs });
      await s.markReopen([m('2/2', 'space_b', T + 60_000), m('2/2', 'space_a', T), m('1/2', 'space_c', T)]);
      await s.markReopen([m('2/2', 'space_a', T)]);
      expect(await s.reopenMarks('2/2')).toEqual([m('2/2', 'space_a', T), m('2/2', 'space_b', T + 60_000)]);
      await s.clearReopenMarks([m('2/2', 'space_a', T)]);
      expect(await s.reopenMarks('2/2')).toEqual([m('2/2', 'space_b', T + 60_000)]);
      expect(await s.reopenMarks('1/2')).toEqual([m('1/2', 'space_c', T)]);
      await s.markReopen([]);
      await s.clearReopenMarks([]);
      await s.close();
    });
    it('answers false to a batch stored before and leaves nothing of the second write', async () => {
      const s = await open();
      const dl = {
        receivedAtMs: T,
        topic: 'hives/HV1/uplink',
        reason: 'UNKNOWN_SENSOR' as const,
        message: 'sensor x',
        payload: new Uint8Array([9]),
      };
      expect(
        await s.writeBatch({
          hiveSerial: 'HV1',
          seq: 1,
          sentAtMs: T,
          receivedAtMs: T,
          ackedSeq: 1,
          packetCount: 2,
          raw: { payload: Uint8Array.from([1]), minSensedMs: T, maxSensedMs: T },
          deadLetters: [dl],
        }),
      ).toBe(true);
      const again = {
        hiveSerial: 'HV1',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T + 1,
        ackedSeq: 5,
        packetCount: 2,
        raw: { payload: Uint8Array.from([2]), minSensedMs: T, maxSensedMs: T },
        deadLetters: [dl, dl],
        sensorsSeen: [{ sensorId: 'sensor_z', lastSeenMs: T }],
      };
      // Another ingest process stored it first: the caller re-acks a duplicate.
      expect(await s.writeBatch(again)).toBe(false);
      expect(await s.ackedSeq('HV1')).toBe(1);
      expect(await s.deadLetters()).toHaveLength(1);
      expect(await s.sensorStatus('sensor_z')).toBeNull();
      expect((await s.payloadsSensedIn(T, T + 1)).map((p) => [...p.payload])).toEqual([[1]]);
      await s.close();
    });

    it("never moves a hive's ack progress back (processes sharing the store finish out of order)", async () => {
      const s = await open();
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 2,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 2,
        packetCount: 1,
        raw: null,
        deadLetters: [],
      });
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 3,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        packetCount: 1,
        raw: null,
        deadLetters: [],
      });
      expect(await s.ackedSeq('HV1')).toBe(2);
      await s.close();
    });

    it("stores a batch's packet dead letters in order, with their bytes", async () => {
      const s = await open();
      const dls = ['UNKNOWN_SENSOR', 'BAD_TIMESTAMP'].map((reason, i) => ({
        receivedAtMs: T + i,
        topic: 'hives/HV1/uplink',
        reason: reason as 'UNKNOWN_SENSOR',
        message: `packet ${i}`,
        payload: Uint8Array.from([i, 255]),
      }));
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        packetCount: 3,
        raw: null,
        deadLetters: dls,
      });
      expect(await s.deadLetters()).toEqual(dls);
      await s.close();
    });

    it('reads minute rows back per space and per sensor, ordered by minute, doubles exactly', async () => {
      const s = await open();
      const values = [0.1 + 0.2, 1 / 3, 2.5e-17, 12345.678901234567];
      await s.writePresenceMinutes(
        values.map((value, m) => ({ spaceId: 'room_a', minuteMs: T + (3 - m) * MIN, value, samples: m })),
      );
      await s.writePresenceMinutes([{ spaceId: 'room_b', minuteMs: T, value: 1, samples: 1 }]);
      expect(await s.presenceMinutes('room_a')).toEqual(
        values.map((value, m) => ({ spaceId: 'room_a', minuteMs: T + (3 - m) * MIN, value, samples: m })).reverse(),
      );
      await s.writeTrafficMinutes([
        { sensorId: 'sensor_t', minuteMs: T + MIN, in: 1, out: 2 },
        { sensorId: 'sensor_t', minuteMs: T, in: 3, out: 4 },
      ]);
      await s.writeTrafficMinutes([{ sensorId: 'sensor_t', minuteMs: T + MIN, in: 5, out: 6 }]);
      expect(await s.trafficMinutes('sensor_t')).toEqual([
        { sensorId: 'sensor_t', minuteMs: T, in: 3, out: 4 },
        { sensorId: 'sensor_t', minuteMs: T + MIN, in: 5, out: 6 },
      ]);
      expect(await s.trafficMinutes('sensor_none')).toEqual([]);
      await s.close();
    });

    it('replaces assets by id and lists them by id', async () => {
      const s = await open();
      await s.writeAssets([
        { id: 'room_b', kind: 'room', parentId: 'space_1', name: 'B', timezone: 'UTC' },
        { id: 'room_a', kind: 'room', parentId: null, name: 'A', timezone: 'UTC' },
      ]);
      await s.writeAssets([{ id: 'room_b', kind: 'room', parentId: 'space_1', name: 'B2', timezone: 'UTC' }]);
      expect((await s.assets()).map((a) => [a.id, a.name, a.parentId])).toEqual([
        ['room_a', 'A', null],
        ['room_b', 'B2', 'space_1'],
      ]);
      await s.close();
    });

    it('prunes outbox events and traffic with the minutes, and rollups per interval', async () => {
      const s = await open();
      await s.writeEvents(
        [0, 5].map((m) => ({
          eventId: `event_${m}`,
          type: 'ROOM_OCCUPANCY_1M',
          spaceId: 'room_a',
          minuteMs: T + m * MIN,
          value: 1,
          revision: 0,
          emittedAtMs: T + m * MIN,
        })),
      );
      await s.writeTrafficMinutes([0, 5].map((m) => ({ sensorId: 'sensor_t', minuteMs: T + m * MIN, in: 1, out: 0 })));
      await s.writePresenceMinutes(
        [0, 5].map((m) => ({ spaceId: 'room_a', minuteMs: T + m * MIN, value: m, samples: 1 })),
      );
      await s.refreshRollups(
        [0, 5].flatMap((k) => [
          { spaceId: 'room_a', level: '5m' as const, startMs: T + k * MIN, endMs: T + (k + 5) * MIN },
          {
            kind: 'traffic' as const,
            spaceId: 'sensor_t',
            level: '5m' as const,
            startMs: T + k * MIN,
            endMs: T + (k + 5) * MIN,
          },
        ]),
      );
      await s.prune({ '1m': T + MIN, '5m': T + 5 * MIN, '1d': Infinity });
      expect((await s.events()).map((e) => e.eventId)).toEqual(['event_5']);
      expect((await s.trafficMinutes('sensor_t')).map((r) => r.minuteMs)).toEqual([T + 5 * MIN]);
      expect(await s.presenceSeries('room_a', '5m', T, T + 10 * MIN)).toEqual([{ bucketMs: T + 5 * MIN, value: 5 }]);
      expect(await s.trafficSeries('sensor_t', '5m', T, T + 10 * MIN)).toEqual([
        { bucketMs: T + 5 * MIN, in: 1, out: 0 },
      ]);
      await s.close();
    });

    it('writes minutes and their outbox events in one call, in order', async () => {
      const s = await open();
      await s.writeMinutes({
        presence: [{ spaceId: 'room_a', minuteMs: T, value: 2, samples: 60 }],
        traffic: [{ sensorId: 'sensor_t', minuteMs: T, in: 1, out: 0 }],
        events: [1, 2].map((v) => ({
          eventId: `event_${v}`,
          type: 'ROOM_OCCUPANCY_1M',
          spaceId: 'room_a',
          minuteMs: T,
          value: v,
          revision: v - 1,
          emittedAtMs: T + MIN,
        })),
      });
      await s.writeMinutes({
        presence: [{ spaceId: 'room_a', minuteMs: T, value: 3, samples: 60 }],
        traffic: [],
        events: [],
      });
      expect(await s.presenceMinutes('room_a')).toEqual([{ spaceId: 'room_a', minuteMs: T, value: 3, samples: 60 }]);
      expect(await s.trafficMinutes('sensor_t')).toEqual([{ sensorId: 'sensor_t', minuteMs: T, in: 1, out: 0 }]);
      expect((await s.events()).map((e) => [e.eventId, e.value])).toEqual([
        ['event_1', 1],
        ['event_2', 2],
      ]);
      await s.close();
    });

    it('forgets what it received from an instant on: batches, payloads, dead letters; the acked progress moves back before them', async () => {
      const s = await open();
      const batch = (hiveSerial: string, seq: number, receivedAtMs: number) => ({
        hiveSerial,
        seq,
        sentAtMs: receivedAtMs,
        receivedAtMs,
        ackedSeq: seq,
        packetCount: 1,
        raw: { payload: Uint8Array.from([seq]), minSensedMs: T, maxSensedMs: T },
        deadLetters: [
          {
            receivedAtMs,
            topic: `hives/${hiveSerial}/uplink`,
            reason: 'UNKNOWN_SENSOR' as const,
            message: `${hiveSerial} ${seq}`,
            payload: new Uint8Array([seq]),
          },
        ],
      });
      for (const seq of [1, 2, 3]) await s.writeBatch(batch('HV1', seq, T + seq * MIN));
      await s.writeBatch(batch('HV2', 1, T));
      expect(await s.forgetReceivedFrom(T + 2 * MIN)).toBe(2);
      expect(await s.hasBatch('HV1', 1)).toBe(true);
      expect(await s.hasBatch('HV1', 2)).toBe(false);
      expect(await s.hasBatch('HV1', 3)).toBe(false);
      expect(await s.ackedSeq('HV1')).toBe(1);
      expect(await s.ackedSeq('HV2')).toBe(1); // received before: untouched
      expect((await s.payloadsSensedIn(T, T + 1)).map((p) => [p.hiveSerial, p.seq])).toEqual([
        ['HV1', 1],
        ['HV2', 1],
      ]);
      expect((await s.deadLetters()).map((d) => d.message)).toEqual(['HV1 1', 'HV2 1']);
      // The forgotten seqs are new again: the same batch is stored once more.
      await s.writeBatch(batch('HV1', 2, T + 5 * MIN));
      expect(await s.hasBatch('HV1', 2)).toBe(true);
      expect(await s.forgetReceivedFrom(T + 10 * MIN)).toBe(0);
      await s.close();
    });

    it("reads a space's minutes in a range as columns, in minute order, doubles exactly", async () => {
      const s = await open();
      const values = [0.1 + 0.2, 1 / 3, 2.5e-17, 12345.678901234567, 7];
      // Written out of minute order: the columns come back sorted all the same.
      await s.writePresenceMinutes(
        values.map((value, m) => ({ spaceId: 'room_a', minuteMs: T + (4 - m) * MIN, value, samples: 60 })),
      );
      await s.writePresenceMinutes([{ spaceId: 'room_b', minuteMs: T + MIN, value: 9, samples: 60 }]);
      const cols = await s.presenceColumns('room_a', T + MIN, T + 4 * MIN);
      expect(cols.minuteMs).toBeInstanceOf(Float64Array);
      expect(cols.value).toBeInstanceOf(Float64Array);
      expect([...cols.minuteMs]).toEqual([T + MIN, T + 2 * MIN, T + 3 * MIN]);
      expect([...cols.value]).toEqual([values[3], values[2], values[1]]);
      // The same minutes as presenceSeries at 1m.
      expect((await s.presenceSeries('room_a', '1m', T, T + 5 * MIN)).map((p) => [p.bucketMs, p.value])).toEqual(
        [...(await s.presenceColumns('room_a', T, T + 5 * MIN)).minuteMs].map((t, i) => [t, values[4 - i]]),
      );
      const none = await s.presenceColumns('room_none', T, T + 5 * MIN);
      expect([none.minuteMs.length, none.value.length]).toEqual([0, 0]);
      expect((await s.presenceColumns('room_a', T + 5 * MIN, T + 9 * MIN)).minuteMs).toHaveLength(0);
      await s.close();
    });

    it('reads many hives and sensors in one call, in the order asked, null where none', async () => {
      const s = await open();
      expect(await s.hiveStatuses([])).toEqual([]);
      expect(await s.sensorStatuses([])).toEqual([]);
      const hb = {
        hiveId: 'hive_1',
        hiveSerial: 'HV1',
        lastHeartbeatMs: T,
        sentAtMs: T - 5,
        state: 'streaming' as const,
        firmwareVersion: '1.4.2',
        protocolMinor: 1,
        uptimeMs: 1000,
        netPathStability: 0.9,
        ackedSeq: 4,
        nextSeq: 5,
        bufferedBatches: 0,
        bufferedBytes: 0,
        droppedPackets: 0,
      };
      const health = {
        sensorId: 'sensor_a',
        measuredAtMs: T - 10,
        batteryLevel: 0.5,
        batteryRuntimeS: 86_400,
        rssiDbm: -70,
        linkPdr: 0.97,
        uptimeMs: 500,
        parent: 'HV1',
        hops: 1,
        queueOverflows: 0,
      };
      await s.writeHeartbeat(hb, [health]);
      await s.writeHeartbeat({ ...hb, hiveId: 'hive_2', hiveSerial: 'HV2', lastHeartbeatMs: T + MIN }, []);
      await s.writeBatch({
        hiveSerial: 'HV1',
        seq: 1,
        sentAtMs: T,
        receivedAtMs: T,
        ackedSeq: 1,
        packetCount: 1,
        raw: null,
        deadLetters: [],
        sensorsSeen: [{ sensorId: 'sensor_b', lastSeenMs: T }],
      });
      const hives = ['hive_2', 'hive_none', 'hive_1', 'hive_2'];
      expect(await s.hiveStatuses(hives)).toEqual(await Promise.all(hives.map((id) => s.hiveStatus(id))));
      expect((await s.hiveStatuses(hives)).map((h) => h?.hiveSerial ?? null)).toEqual(['HV2', null, 'HV1', 'HV2']);
      const sensors = ['sensor_b', 'sensor_none', 'sensor_a', 'it\'s "quoted"'];
      expect(await s.sensorStatuses(sensors)).toEqual(await Promise.all(sensors.map((id) => s.sensorStatus(id))));
      expect((await s.sensorStatuses(sensors)).map((r) => r?.lastSeenMs ?? null)).toEqual([T, null, T - 10, null]);
      // A fleet's worth of ids in one call.
      const many = Array.from({ length: 5000 }, (_, i) => (i === 4321 ? 'sensor_a' : `sensor_${i}`));
      const rows = await s.sensorStatuses(many);
      expect(rows.filter((r) => r !== null).map((r) => r?.sensorId)).toEqual(['sensor_a']);
      expect(rows[4321]?.batteryLevel).toBe(0.5);
      await s.close();
    });

    it('keeps the order of calls issued without awaiting each', async () => {
      const s = await open();
      const writes = [1, 2, 3].map((v) => s.setState('k', v));
      const read = s.getState('k');
      await Promise.all(writes);
      expect(await read).toBe(3);
      await s.close();
    });
  });
}
