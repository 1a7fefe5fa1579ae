import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import {
  HIVE_OFFLINE_AFTER_MS,
  RequestStatus,
  SENSOR_OFFLINE_AFTER_MS,
  type StatusSource,
} from '../../src/api/status.js';
import type { HiveStatus, SensorStatus } from '../../src/store/port.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

const model = ((): ScenarioModel => {
  const r = loadScenarioFile(new URL('../../scenarios/office-day.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('office-day does not load');
  return r.model;
})();
const T = Date.UTC(2026, 2, 2, 9);

function hive(id: string, lastHeartbeatMs: number, state: HiveStatus['state'] = 'streaming'): HiveStatus {
  return {
    hiveId: id,
    hiveSerial: 's',
    lastHeartbeatMs,
    sentAtMs: lastHeartbeatMs,
    state,
    firmwareVersion: '1',
    protocolMinor: 0,
    uptimeMs: 0,
    netPathStability: 1,
    ackedSeq: 0,
    nextSeq: 1,
    bufferedBatches: 0,
    bufferedBytes: 0,
    droppedPackets: 0,
  };
}

function sensor(id: string, lastSeenMs: number, healthAtMs: number | null): SensorStatus {
  return {
    sensorId: id,
    lastSeenMs,
    healthAtMs,
    batteryLevel: null,
    batteryRuntimeS: null,
    rssiDbm: null,
    linkPdr: null,
    uptimeMs: null,
    parent: null,
    hops: null,
    queueOverflows: null,
  };
}

/** A fixed table standing in for the store (this module's unit test); counts store calls and ids read. */
function source(hives: HiveStatus[], sensors: SensorStatus[]): StatusSource & { reads: number; ids: number } {
  const src = {
    reads: 0,
    ids: 0,
    hiveStatuses: (ids: readonly string[]) => (
      src.reads++,
      (src.ids += ids.length),
      Promise.resolve(ids.map((id) => hives.find((h) => h.hiveId === id) ?? null))
    ),
    sensorStatuses: (ids: readonly string[]) => (
      src.reads++,
      (src.ids += ids.length),
      Promise.resolve(ids.map((id) => sensors.find((s) => s.sensorId === id) ?? null))
    ),
  };
  return src;
}

describe('device status for GraphQL', () => {
  const assets = catalogueFromScenario(model);
  const [h1, h2] = model.hives;
  const [s1, s2, s3] = model.sensors;

  it('needs at least two hives and three sensors in the fixture', () => {
    expect(h1 && h2 && s1 && s2 && s3).toBeTruthy();
  });

  it("measures recency against the organisation's newest heartbeat, not the wall clock", async () => {
    const st = new RequestStatus(
      source([hive(h1!.id, T), hive(h2!.id, T - HIVE_OFFLINE_AFTER_MS - 1)], []),
      assets,
      model.org.id,
    );
    expect(await st.hive(h1!.id)).toEqual({ online: true, streaming: true, lastHeartbeat: new Date(T).toISOString() });
    expect((await st.hive(h2!.id)).online).toBe(false);
    expect((await st.hive(h2!.id)).lastHeartbeat).toBe(new Date(T - HIVE_OFFLINE_AFTER_MS - 1).toISOString());
  });

  it('reads a booting hive as online but not streaming, and a never-heard device as offline with no heartbeat', async () => {
    const st = new RequestStatus(source([hive(h1!.id, T, 'booting')], []), assets, model.org.id);
    expect(await st.hive(h1!.id)).toEqual({ online: true, streaming: false, lastHeartbeat: new Date(T).toISOString() });
    expect(await st.hive(h2!.id)).toEqual({ online: false, streaming: false, lastHeartbeat: null });
    expect(await st.sensor(s1!.id)).toEqual({ online: false, streaming: false, lastHeartbeat: null });
  });

  it('reads sensors from their last data or health: streaming within 2 min, online within 5 min', async () => {
    const src = source(
      [hive(h1!.id, T)],
      [
        sensor(s1!.id, T - 30_000, T - 60_000),
        sensor(s2!.id, T - 3 * 60_000, null),
        sensor(s3!.id, T - SENSOR_OFFLINE_AFTER_MS - 1, T - 400_000),
      ],
    );
    const st = new RequestStatus(src, assets, model.org.id);
    expect(await st.sensor(s1!.id)).toEqual({
      online: true,
      streaming: true,
      lastHeartbeat: new Date(T - 60_000).toISOString(),
    });
    expect(await st.sensor(s2!.id)).toEqual({ online: true, streaming: false, lastHeartbeat: null });
    expect((await st.sensor(s3!.id)).online).toBe(false);
    const reads = src.reads;
    await st.sensor(s1!.id);
    await st.hive(h1!.id);
    expect(src.reads).toBe(reads); // one read per device per request
  });

  it('reads the devices asked for in the same turn in one store call each, and each device once', async () => {
    const src = source([hive(h1!.id, T)], [sensor(s1!.id, T, null)]);
    const st = new RequestStatus(src, assets, model.org.id);
    const sensors = model.sensors.slice(0, 50).map((s) => s.id);
    // As GraphQL resolves a list: every field of every item asked for before any answer.
    const flags = await Promise.all([...sensors, ...sensors].map((id) => st.sensor(id)));
    expect(flags.filter((f) => f.online)).toHaveLength(2); // s1, asked twice
    const hives = assets.list('hive', model.org.id).length;
    expect(src.reads).toBe(2); // the organisation's hives (the present), then the 50 sensors
    expect(src.ids).toBe(hives + 50);
  });

  it('rejects every waiting read when the store fails, and the next request reads again', async () => {
    let fail = true;
    const src: StatusSource = {
      hiveStatuses: (ids) => (fail ? Promise.reject(new Error('store down')) : Promise.resolve(ids.map(() => null))),
      sensorStatuses: (ids) => Promise.resolve(ids.map(() => null)),
    };
    const st = new RequestStatus(src, assets, model.org.id);
    await expect(Promise.all([st.hive(h1!.id), st.sensor(s1!.id)])).rejects.toThrow('store down');
    fail = false;
    expect(await new RequestStatus(src, assets, model.org.id).hive(h1!.id)).toEqual({
      online: false,
      streaming: false,
      lastHeartbeat: null,
    });
  });
});
