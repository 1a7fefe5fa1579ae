import { describe, expect, it } from 'vitest';
import { FaultTimeline } from '../../src/mesh/faults.js';
import { MeshSim } from '../../src/mesh/mesh.js';
import { pdrAt, rssiDbm, wallsCrossed } from '../../src/mesh/radio.js';
import { buildHiveMesh, route } from '../../src/mesh/topology.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { FaultModel, ScenarioModel } from '../../src/scenario/model.js';
import { DEFAULT_NETWORK } from '../../src/scenario/resolve-network.js';

const FILE = new URL('../../scenarios/hive-outage.yaml', import.meta.url).pathname;

function model(): ScenarioModel {
  const r = loadScenarioFile(FILE);
  if (!r.ok) throw new Error('hive-outage.yaml does not load');
  return { ...r.model, faults: [] };
}

const RADIO = DEFAULT_NETWORK.mesh;

function sendEverySecond(m: ScenarioModel, mesh: MeshSim<number>, seconds: number): void {
  for (let s = 0; s < seconds; s++) for (const sensor of m.sensors) mesh.send(sensor, m.startMs + s * 1000, s);
}

describe('mesh radio model', () => {
  it('counts a wall shared by two rooms once', () => {
    const a: [number, number][] = [
      [0, 0],
      [8, 0],
      [8, 8],
      [0, 8],
    ];
    const b: [number, number][] = [
      [8, 0],
      [16, 0],
      [16, 8],
      [8, 8],
    ];
    expect(wallsCrossed([4, 4], [12, 4], [a, b])).toBe(1);
    expect(wallsCrossed([1, 4], [7, 4], [a, b])).toBe(0);
  });

  it('loses frames with distance and walls', () => {
    expect(pdrAt(RADIO, rssiDbm(RADIO, 5, 0, 0))).toBeGreaterThan(0.99);
    expect(pdrAt(RADIO, rssiDbm(RADIO, 30, 5, 0))).toBeLessThan(0.01);
  });
});

describe('mesh topology', () => {
  it('reaches the far offices over several hops, with a backup parent where one exists', () => {
    const m = model();
    const mesh = buildHiveMesh(m, m.hives[0]!.id, RADIO);
    const r = route(mesh, new Set());
    const hops = r.hops.slice(1);
    expect(hops.every((h) => Number.isFinite(h) && h >= 1)).toBe(true);
    expect(Math.max(...hops)).toBeGreaterThanOrEqual(2);
    expect(r.parents.filter((p) => p.length === 2).length).toBeGreaterThan(0);
  });

  it('routes around an offline relay (rejoin through the backup parent)', () => {
    const m = model();
    const mesh = buildHiveMesh(m, m.hives[0]!.id, RADIO);
    const before = route(mesh, new Set());
    const relay = before.parents.find((p) => p[0] && p[0].to !== 0)?.[0]?.to;
    expect(relay).toBeDefined();
    const after = route(mesh, new Set([mesh.nodes[relay!]!.id]));
    expect(after.parents.every((p) => p.every((l) => l.to !== relay))).toBe(true);
  });
});

describe('mesh simulation', () => {
  it('is deterministic for a seed and delivers frames of one sensor in order', () => {
    const m = model();
    const run = () => {
      const mesh = new MeshSim<number>(m, m.hives[0]!.id, RADIO, new FaultTimeline([]));
      sendEverySecond(m, mesh, 120);
      return mesh.takeArrived(Infinity);
    };
    const a = run();
    expect(JSON.stringify(run())).toBe(JSON.stringify(a));
    for (const s of m.sensors) {
      const mine = a.filter((x) => x.sensorId === s.id).map((x) => x.item);
      expect(mine).toEqual([...mine].sort((x, y) => x - y));
    }
  });

  it('retries degraded links until the frames get through, costing attempts and battery', () => {
    const m = model();
    const far = m.sensors.filter((s) => s.name === 'Office 6' || s.name === 'Office 5').map((s) => s.id);
    const degraded: FaultModel = {
      kind: 'link_degradation',
      atMs: m.startMs,
      durationMs: 3_600_000,
      sensorIds: far,
      loss: 0.3,
      src: '',
    };
    const clean = new MeshSim<number>(m, m.hives[0]!.id, RADIO, new FaultTimeline([]));
    const lossy = new MeshSim<number>(m, m.hives[0]!.id, RADIO, new FaultTimeline([degraded]));
    sendEverySecond(m, clean, 300);
    sendEverySecond(m, lossy, 300);
    expect(lossy.counters.attempts).toBeGreaterThan(clean.counters.attempts);
    expect(lossy.counters.delivered / lossy.counters.sent).toBeGreaterThanOrEqual(0.999);
    // Lost per-hop acks make the sender repeat frames its parent already has (removed by mesh_seq).
    expect(lossy.counters.duplicates).toBeGreaterThan(clean.counters.duplicates);
    const level = (x: MeshSim<number>) => x.batteries.get(far[0]!)!.level(m.startMs + 300_000);
    expect(level(lossy)).toBeLessThan(level(clean));
  });

  it('holds frames while the hive reboots and counts what overflows a full queue', () => {
    const m = model();
    const reboot: FaultModel = {
      kind: 'hive_reboot',
      atMs: m.startMs + 60_000,
      durationMs: 120_000,
      hiveIds: [m.hives[0]!.id],
      src: '',
    };
    const mesh = new MeshSim<number>(m, m.hives[0]!.id, { ...RADIO, queueFrames: 16 }, new FaultTimeline([reboot]));
    sendEverySecond(m, mesh, 300);
    const arrived = mesh.takeArrived(Infinity);
    expect(
      arrived.some(
        (a) => a.sentAtMs < reboot.atMs + reboot.durationMs && a.arrivedAtMs >= reboot.atMs + reboot.durationMs,
      ),
    ).toBe(true);
    expect(mesh.counters.queueOverflow).toBeGreaterThan(0);
    expect(mesh.counters.delivered + mesh.counters.dropped + mesh.counters.queueOverflow).toBe(mesh.counters.sent);
  });
});
