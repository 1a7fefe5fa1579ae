import { describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { HIVE_OFFLINE_AFTER_MS, RequestStatus, SENSOR_OFFLINE_AFTER_MS, type StatusSource } from '../../src/api/status.js';
import type { HiveStatus, SensorStatus } from '../../src/cloud/store/port.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

const model = ((): ScenarioModel => {
  const r = loadScenarioFile(new URL('../../scenarios/office-day.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('office-day does not load');
  return r.model;
})();
const T = Date.UTC(2026, 2, 2, 9);

function hive(id: string, lastHeartbeatMs: number, state: HiveStatus['state'] = 'streaming'): HiveStatus {
  return { hiveId: id, hiveSerial: 's', lastHeartbeatMs, sentAtMs: lastHeartbeatMs, state, firmwareVersion: '1', protocolMinor: 0, uptimeMs: 0, netPathStability: 1, ackedSeq: 0, nextSeq: 1, bufferedBatches: 0, bufferedBytes: 0, droppedPackets: 0 };
}

function sensor(id: string, lastSeenMs: number, healthAtMs: number | null): SensorStatus {
  return { sensorId: id, lastSeenMs, healthAtMs, batteryLevel: null, batteryRuntimeS: null, rssiDbm: null, linkPdr: null, uptimeMs: null, parent: null, hops: null, queueOverflows: null };
}

/** A fixed table standing in for the store (this module's unit test). */
function source(hives: HiveStatus[], sensors: SensorStatus[]): StatusSource & { reads: number } {
  const src = {
    reads: 0,
    hiveStatus: (id: string) => (src.reads++, hives.find((h) => h.hiveId === id) ?? null),
    sensorStatus: (id: string) => (src.reads++, sensors.find((s) => s.sensorId === id) ?? null),
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

  it('measures recency against the organisation\'s newest heartbeat, not the wall clock', () => {
    const st = new RequestStatus(source([hive(h1!.id, T), hive(h2!.id, T - HIVE_OFFLINE_AFTER_MS - 1)], []), assets, model.org.id);
    expect(st.hive(h1!.id)).toEqual({ online: true, streaming: true, lastHeartbeat: new Date(T).toISOString() });
    expect(st.hive(h2!.id).online).toBe(false);
    expect(st.hive(h2!.id).lastHeartbeat).toBe(new Date(T - HIVE_OFFLINE_AFTER_MS - 1).toISOString());
  });

  it('reads a booting hive as online but not streaming, and a never-heard device as offline with no heartbeat', () => {
    const st = new RequestStatus(source([hive(h1!.id, T, 'booting')], []), assets, model.org.id);
    expect(st.hive(h1!.id)).toEqual({ online: true, streaming: false, lastHeartbeat: new Date(T).toISOString() });
    expect(st.hive(h2!.id)).toEqual({ online: false, streaming: false, lastHeartbeat: null });
    expect(st.sensor(s1!.id)).toEqual({ online: false, streaming: false, lastHeartbeat: null });
  });

  it('reads sensors from their last data or health: streaming within 2 min, online within 5 min', () => {
    const src = source([hive(h1!.id, T)], [sensor(s1!.id, T - 30_000, T - 60_000), sensor(s2!.id, T - 3 * 60_000, null), sensor(s3!.id, T - SENSOR_OFFLINE_AFTER_MS - 1, T - 400_000)]);
    const st = new RequestStatus(src, assets, model.org.id);
    expect(st.sensor(s1!.id)).toEqual({ online: true, streaming: true, lastHeartbeat: new Date(T - 60_000).toISOString() });
    expect(st.sensor(s2!.id)).toEqual({ online: true, streaming: false, lastHeartbeat: null });
    expect(st.sensor(s3!.id).online).toBe(false);
    const reads = src.reads;
    st.sensor(s1!.id);
    st.hive(h1!.id);
    expect(src.reads).toBe(reads); // one read per device per request
  });
});
