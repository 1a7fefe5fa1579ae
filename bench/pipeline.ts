/**
 * Pipeline section (issue #5): the pure cloud pipeline path — decode + validate + dedupe +
 * occupancy + rollup — over the same uplink messages, side by side with
 * - the live cloud's `CloudPipeline` (the same hot path plus its SQLite store, acks and the
 *   recompute window),
 * - the Map-based reference path (protobufjs decode + `inspectUplink` +
 *   `PresenceAggregator`, the live path before the kernel), and
 * - DuckDB (`@duckdb/node-api`) computing per-minute room occupancy from the same detection
 *   records (given already decoded: it cannot read the protobuf itself).
 * Then the SQLite store: batch write throughput, and the query of 1 day × 1m × 1,000 rooms.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspectUplink } from '../src/cloud/ingest.js';
import { StorelessPipeline } from '../test/oracles/storeless-pipeline.js';
import { CloudPipeline } from '../src/cloud/pipeline.js';
import { catalogueFromScenario } from '../src/assets/from-scenario.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { asyncStore } from '../src/store/sqlite-async.js';
import { VirtualClock } from '../src/core/clock.js';
import { PresenceAggregator } from '../test/oracles/presence-reference.js';
import { buildRegistry, type AssetRegistry } from '../src/cloud/registry.js';
import { uplinkTopic } from '../src/core/topics.js';
import { createModelSensors } from '../src/edge/sensors.js';
import { encodeUplink } from '../src/proto/codec.js';
import type { WirePacket } from '../src/proto/messages.js';
import { loadScenarioFile } from '../src/scenario/load.js';
import type { ScenarioModel } from '../src/scenario/model.js';
import { createWorld } from '../src/sim/world.js';
import { storeBench } from './pipeline-store.js';

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const MIN = 60_000;

interface Corpus {
  messages: Array<{ topic: string; bytes: Uint8Array }>;
  packets: number;
  detections: number;
}

/** Real sensor packets of office-day's busiest hours (09:00–11:00), batched per hive every 10 s. */
function corpus(model: ScenarioModel, fromMs: number, toMs: number): Corpus {
  const world = createWorld(model);
  const edge = createModelSensors(model);
  const mac = new Map(model.sensors.map((s) => [s.id, s.mac] as const));
  const hiveOf = new Map(
    model.sensors.map((s) => [s.id, model.hives.find((h) => h.id === s.hiveId)?.serial ?? ''] as const),
  );
  const pending = new Map<string, WirePacket[]>();
  const seqs = new Map<string, number>();
  const out: Corpus = { messages: [], packets: 0, detections: 0 };
  for (let t = model.startMs; t < toMs; t += model.tickMs) {
    const packets = edge.sample(world.step(t), world);
    if (t < fromMs) continue;
    for (const p of packets) {
      const wire: WirePacket =
        p.kind === 'presence'
          ? { ...p, sensorMac: mac.get(p.sensorId) ?? '' }
          : { ...p, sensorMac: mac.get(p.sensorId) ?? '' };
      const serial = hiveOf.get(p.sensorId) ?? '';
      const list = pending.get(serial) ?? [];
      list.push(wire);
      pending.set(serial, list);
      out.packets++;
      if (p.kind === 'presence') out.detections += p.detections.length;
    }
    if ((t + model.tickMs) % 10_000 === 0) flush();
  }
  flush();
  return out;

  function flush(): void {
    for (const [serial, packets] of pending) {
      const seq = (seqs.get(serial) ?? 0) + 1;
      seqs.set(serial, seq);
      out.messages.push({
        topic: uplinkTopic(serial),
        bytes: encodeUplink({ hiveSerial: serial, seq, sentAtMs: 0, packets }),
      });
    }
    pending.clear();
  }
}

/** CPU time (user + system) of fn in ms: the per-core figure on a shared, loaded machine. */
function cpuMs(fn: () => void): number {
  const c = process.cpuUsage();
  fn();
  const d = process.cpuUsage(c);
  return (d.user + d.system) / 1000;
}

function fastPath(model: ScenarioModel, registry: AssetRegistry, c: Corpus): { ms: number; rows: Map<string, number> } {
  // Registry-derived tables (rasters, solo grids) are built once per process, before traffic.
  const fast = new StorelessPipeline(registry, model.tickMs, model.sites[0]?.timezone ?? 'UTC');
  const rows = new Map<string, number>();
  const ms = cpuMs(() => {
    let i = 0;
    for (const m of c.messages) {
      fast.ingest(m.topic, m.bytes);
      // Every simulated minute (6 messages per hive), finalise what is 2 minutes old.
      if (++i % 18 === 0)
        for (const r of fast.finaliseBefore((fast.kernel.openMinutes()[0] ?? 0) - MIN))
          rows.set(`${r.spaceId}|${r.minuteMs}`, r.value);
    }
    for (const r of fast.finaliseBefore(Infinity)) rows.set(`${r.spaceId}|${r.minuteMs}`, r.value);
  });
  return { ms, rows };
}

/** The live cloud's pipeline over a WAL file store: CPU and wall time (SQLite writes included). */
async function livePath(model: ScenarioModel, c: Corpus, fromMs: number): Promise<{ cpu: number; wall: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-live-'));
  const store = new SqliteStore(join(dir, 'cloud.sqlite'));
  const clock = new VirtualClock(fromMs);
  const pipeline = new CloudPipeline({
    catalogue: catalogueFromScenario(model),
    tickMs: model.tickMs,
    store: asyncStore(store),
    clock,
    lookbackMs: 5 * MIN,
  });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let i = 0;
  for (const m of c.messages) {
    await pipeline.handleMessage(m.topic, m.bytes);
    // 18 messages per simulated minute (3 hives every 10 s): the clock follows the corpus.
    if (++i % 18 === 0) {
      clock.advanceTo(fromMs + (i / 18) * MIN);
      await pipeline.advance(clock.now());
    }
  }
  await pipeline.finish();
  const used = process.cpuUsage(c0);
  const cpu = (used.user + used.system) / 1000;
  const wall = performance.now() - t0;
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return { cpu, wall };
}

function mapPath(registry: AssetRegistry, c: Corpus): number {
  const agg = new PresenceAggregator(registry);
  return cpuMs(() => {
    for (const m of c.messages) {
      const v = inspectUplink(registry, { topic: m.topic, payload: m.bytes, receivedAtMs: 0 });
      if (v.kind !== 'accepted') continue;
      for (const { sensorId, packet } of v.packets)
        if (packet.kind === 'presence') agg.add(sensorId, packet.sensedAtMs, packet.detections);
    }
    for (const minute of agg.openMinutes()) agg.finalise(minute);
  });
}

/** DuckDB: append decoded records, then per-minute room occupancy (median over sampled instants, rooms by bounding box, no merging). */
async function duckPath(
  model: ScenarioModel,
  registry: AssetRegistry,
  c: Corpus,
): Promise<{ ms: number; cpuMs: number; rows: Map<string, number> }> {
  const records: Array<[number, number, number, number]> = [];
  const reports: Array<[number, number]> = [];
  const sensorIdx = new Map(model.sensors.map((s, i) => [s.id, i] as const));
  for (const m of c.messages) {
    const v = inspectUplink(registry, { topic: m.topic, payload: m.bytes, receivedAtMs: 0 });
    if (v.kind !== 'accepted') continue;
    for (const { sensorId, packet } of v.packets) {
      if (packet.kind !== 'presence') continue;
      const s = sensorIdx.get(sensorId) ?? 0;
      reports.push([s, packet.sensedAtMs]);
      for (const [x, y] of packet.detections) records.push([s, packet.sensedAtMs, x, y]);
    }
  }
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  await con.run(
    'CREATE TABLE det (sensor INTEGER, t BIGINT, lx DOUBLE, ly DOUBLE); CREATE TABLE rep (sensor INTEGER, t BIGINT)',
  );
  await con.run(
    'CREATE TABLE sensors (sensor INTEGER, cx DOUBLE, cy DOUBLE, side DOUBLE, c DOUBLE, s DOUBLE); CREATE TABLE rooms (room VARCHAR, x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE, floor VARCHAR); CREATE TABLE samples (sensor INTEGER, room VARCHAR)',
  );
  for (const [i, s] of model.sensors.entries()) {
    const yaw = (s.orientationDeg * Math.PI) / 180;
    await con.run(
      `INSERT INTO sensors VALUES (${i}, ${s.center[0]}, ${s.center[1]}, ${registry.transform(s.id).side}, ${Math.cos(yaw)}, ${Math.sin(yaw)})`,
    );
    if (s.mode === 'presence' && s.roomId !== null) await con.run(`INSERT INTO samples VALUES (${i}, '${s.roomId}')`);
  }
  for (const r of model.rooms) {
    const xs = r.polygon.map((p) => p[0]);
    const ys = r.polygon.map((p) => p[1]);
    await con.run(
      `INSERT INTO rooms VALUES ('${r.id}', ${Math.min(...xs)}, ${Math.min(...ys)}, ${Math.max(...xs)}, ${Math.max(...ys)}, '${r.floorId}')`,
    );
  }
  await con.run(
    `CREATE TABLE sensor_floor AS SELECT * FROM (VALUES ${model.sensors.map((s, i) => `(${i}, '${s.floorId}')`).join(',')}) v(sensor, floor)`,
  );
  // DuckDB runs its query on its own threads: both wall time and the process's CPU time.
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const det = await con.createAppender('det');
  for (const [s, t, x, y] of records) {
    det.appendInteger(s);
    det.appendBigInt(BigInt(t));
    det.appendDouble(x);
    det.appendDouble(y);
    det.endRow();
  }
  det.closeSync();
  const rep = await con.createAppender('rep');
  for (const [s, t] of reports) {
    rep.appendInteger(s);
    rep.appendBigInt(BigInt(t));
    rep.endRow();
  }
  rep.closeSync();
  const result = await con.runAndReadAll(`
    WITH world AS (
      SELECT d.t, f.floor, s.cx + (d.lx - 0.5) * s.side * s.c - (d.ly - 0.5) * s.side * s.s AS x,
                          s.cy + (d.lx - 0.5) * s.side * s.s + (d.ly - 0.5) * s.side * s.c AS y
      FROM det d JOIN sensors s USING (sensor) JOIN sensor_floor f USING (sensor)),
    counts AS (SELECT r.room, w.t, COUNT(*) AS n FROM world w JOIN rooms r ON w.floor = r.floor AND w.x BETWEEN r.x0 AND r.x1 AND w.y BETWEEN r.y0 AND r.y1 GROUP BY ALL),
    sampled AS (SELECT DISTINCT sa.room, rp.t FROM rep rp JOIN samples sa USING (sensor))
    SELECT sampled.room, (sampled.t // 60000) * 60000 AS minute, MEDIAN(COALESCE(counts.n, 0)) AS value
    FROM sampled LEFT JOIN counts USING (room, t) GROUP BY ALL`);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const rows = new Map<string, number>();
  for (const [room, minute, value] of result.getRows()) rows.set(`${String(room)}|${String(minute)}`, Number(value));
  con.closeSync();
  db.closeSync();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, rows };
}

export async function runPipelineBench(root: string): Promise<void> {
  const loaded = loadScenarioFile(join(root, 'scenarios/office-day.yaml'));
  if (!loaded.ok) throw new Error('office-day does not load');
  const model = loaded.model;
  const registry = buildRegistry(model);
  console.log('== pipeline: office-day 09:00–11:00, real model-fidelity packets, same messages for every path');
  const c = corpus(model, model.startMs + 3 * 3_600_000, model.startMs + 5 * 3_600_000);
  console.log(
    `  ${fmt(c.messages.length)} uplink messages, ${fmt(c.packets)} packets, ${fmt(c.detections)} detection records`,
  );
  for (let i = 0; i < 3; i++) fastPath(model, registry, c); // warm-up (JIT)
  const fast = [0, 1, 2].map(() => fastPath(model, registry, c)).reduce((a, b) => (b.ms < a.ms ? b : a));
  const live = await livePath(model, c, model.startMs + 3 * 3_600_000);
  const map = mapPath(registry, c);
  const duck = await duckPath(model, registry, c);
  const rate = (ms: number): string =>
    `${fmt(c.detections / (ms / 1000)).padStart(11)} detections/s  ${fmt(c.packets / (ms / 1000)).padStart(10)} packets/s`;
  console.log(
    `  typed-array pipeline, CPU time, 1 thread (decode+validate+dedupe+occupancy+rollup) ${rate(fast.ms)}  (${Math.round(fast.ms)} ms)  baseline 1.00`,
  );
  console.log(
    `  live CloudPipeline, CPU time (the same path + SQLite WAL store, acks, recompute)   ${rate(live.cpu)}  (${Math.round(live.cpu)} ms)  ratio ${(fast.ms / live.cpu).toFixed(2)}`,
  );
  console.log(
    `  live CloudPipeline, wall time                                                    ${rate(live.wall)}  (${Math.round(live.wall)} ms)  ratio ${(fast.ms / live.wall).toFixed(2)}`,
  );
  console.log(
    `  Map-based reference (protobufjs+inspect+aggregator, the live path before)        ${rate(map)}  (${Math.round(map)} ms)  ratio ${(fast.ms / map).toFixed(2)}`,
  );
  console.log(
    `  DuckDB, CPU time (append decoded records + SQL, rooms only, no merge)            ${rate(duck.cpuMs)}  (${Math.round(duck.cpuMs)} ms)  ratio ${(fast.ms / duck.cpuMs).toFixed(2)}`,
  );
  console.log(
    `  DuckDB, wall time (all its threads)                                              ${rate(duck.ms)}  (${Math.round(duck.ms)} ms)  ratio ${(fast.ms / duck.ms).toFixed(2)}`,
  );
  let same = 0;
  let compared = 0;
  for (const [key, v] of duck.rows) {
    const mine = fast.rows.get(key);
    if (mine === undefined) continue;
    compared++;
    if (mine === v) same++;
  }
  console.log(
    `  pipeline vs DuckDB: ×${(duck.cpuMs / fast.ms).toFixed(2)} per core (CPU time), ×${(duck.ms / fast.ms).toFixed(2)} against its wall time; room-minutes equal in both: ${same}/${compared} (DuckDB does not merge overlapping sensors)`,
  );
  storeBench(c.messages.length);
}
