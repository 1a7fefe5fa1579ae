import { ScaledWallClock, type VirtualClock } from '../core/clock.js';
import type { EdgeStage } from '../edge/sensors.js';
import type { SensorPacket } from '../edge/packet.js';
import type { WirePacket } from '../proto/messages.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { TruthRecorder } from '../sim/truth.js';
import type { World } from '../sim/types.js';
import { sleepWall } from './perf.js';
import type { Platform } from './platform.js';

/**
 * The simulation loop: one world tick at a time, on the one clock. At every batch interval
 * the hives publish and the loop waits for the cloud's end-to-end acknowledgements before
 * time moves on, so at `--speed max` the simulator never outruns the cloud and the run is
 * deterministic.
 */
export interface LoopContext {
  model: ScenarioModel;
  clock: VirtualClock;
  world: World;
  truth: TruthRecorder;
  edge: EdgeStage;
  platform: Platform;
  speed: 'max' | number;
  onProgress: ((doneMs: number, totalMs: number) => void) | null;
}

export interface LoopStats {
  ticks: number;
  packetsSent: number;
  batchesSent: number;
  /** Sensor-seconds simulated: sensors × simulated seconds. */
  sensorSeconds: number;
}

interface Route {
  mac: string;
  hiveId: string;
}

export async function simulate(ctx: LoopContext): Promise<LoopStats> {
  const { model, clock, world, truth, edge, platform } = ctx;
  const routes = new Map<string, Route>(model.sensors.map((s) => [s.id, { mac: s.mac, hiveId: s.hiveId }]));
  const pacer = ctx.speed === 'max' ? null : new ScaledWallClock(model.startMs, ctx.speed);
  const endMs = model.startMs + model.durationMs;
  const progressEvery = Math.max(1, Math.floor(model.durationMs / model.tickMs / 200));
  const stats: LoopStats = { ticks: 0, packetsSent: 0, batchesSent: 0, sensorSeconds: (model.sensors.length * model.durationMs) / 1000 };

  let t = model.startMs;
  for (; t < endMs; t += model.tickMs) {
    if (pacer) await paceTo(pacer, t);
    clock.advanceTo(t);
    const step = world.step(t);
    truth.observe(step, world);
    for (const packet of edge.sample(step, world)) {
      enqueue(platform, routes, packet);
      stats.packetsSent++;
    }
    stats.ticks++;
    if ((t + model.tickMs - model.startMs) % model.batchIntervalMs === 0) stats.batchesSent += await flush(platform, t);
    if (stats.ticks % progressEvery === 0) ctx.onProgress?.(t + model.tickMs - model.startMs, model.durationMs);
  }
  const lastMs = Math.max(model.startMs, t - model.tickMs);
  stats.batchesSent += await flush(platform, lastMs);
  ctx.onProgress?.(model.durationMs, model.durationMs);
  return stats;
}

async function paceTo(pacer: ScaledWallClock, simMs: number): Promise<void> {
  const delay = pacer.wallDelayUntil(simMs);
  if (delay > 1) await sleepWall(delay);
}

function enqueue(platform: Platform, routes: ReadonlyMap<string, Route>, packet: SensorPacket): void {
  const route = routes.get(packet.sensorId);
  const hive = route ? platform.hives.get(route.hiveId) : undefined;
  if (!route || !hive) throw new Error(`no route for sensor ${packet.sensorId}`);
  hive.batcher.enqueue(toWire(packet, route.mac));
}

function toWire(p: SensorPacket, mac: string): WirePacket {
  if (p.kind === 'presence') return { kind: 'presence', sensorMac: mac, sensedAtMs: p.sensedAtMs, detections: p.detections };
  return { kind: 'traffic', sensorMac: mac, sensedAtMs: p.sensedAtMs, intervalMs: p.intervalMs, in: p.in, out: p.out };
}

/** Every hive publishes what it holds; resolves when the cloud has acknowledged all of it. */
async function flush(platform: Platform, atMs: number): Promise<number> {
  const counts = await Promise.all(
    [...platform.hives.values()].map(async (hive) => {
      const batches = hive.batcher.takeBatches(atMs);
      for (const b of batches) await hive.link.publish(b);
      return batches.length;
    }),
  );
  platform.cloud.advance(atMs);
  return counts.reduce((a, b) => a + b, 0);
}
