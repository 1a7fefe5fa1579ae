import { ScaledWallClock, type VirtualClock } from '../core/clock.js';
import type { EdgeStage } from '../edge/stage.js';
import type { DeliveryStage } from '../hive/delivery.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { TruthRecorder } from '../sim/truth.js';
import type { World } from '../sim/types.js';
import type { Platform } from '../platform/platform.js';
import type { LagMonitor } from './lag.js';
import { sleepWall } from './perf.js';

/**
 * The simulation loop, on the one clock: the world advances one tick at a time and the edge
 * observes it; at every batch interval the edge hands over its packets, the delivery stage
 * carries them to the cloud and the loop waits for the cloud's acknowledgements before time
 * moves on. At `--speed max` the simulator never outruns the cloud, so the run is
 * deterministic.
 */
export interface LoopContext {
  model: ScenarioModel;
  clock: VirtualClock;
  world: World;
  truth: TruthRecorder;
  edge: EdgeStage;
  delivery: DeliveryStage;
  /** The platform under test: reached over MQTT by the hives, and told the time by `advanceTo`. */
  platform: Pick<Platform, 'advanceTo'>;
  speed: 'max' | number;
  onProgress: ((doneMs: number, totalMs: number, packetsSent: number) => void) | null;
  /** Sees the world after each tick (the live view's truth; absent: nothing is built for it). */
  onStep?: ((t: number, world: World) => void) | null;
  /** Aborted: stop at the next tick (Ctrl-C during a served real-time run). */
  signal?: AbortSignal | null;
  /** Paced runs: lag and sensing → stored figures (wall time, for the report's `perf`). */
  lag?: LagMonitor | null;
  /** Paced runs: where the rate-limited "behind real time" warnings go (stderr in the CLI). */
  onWarning?: ((message: string) => void) | null;
}

export interface LoopStats {
  ticks: number;
  packetsSent: number;
  batchesSent: number;
  /** Sensor-seconds simulated: sensors × simulated seconds. */
  sensorSeconds: number;
  /** Stopped by the signal before the scenario's end. */
  interrupted: boolean;
}

export async function simulate(ctx: LoopContext): Promise<LoopStats> {
  const { model, clock, world, truth, edge } = ctx;
  const pacer = ctx.speed === 'max' ? null : new ScaledWallClock(model.startMs, ctx.speed);
  const endMs = model.startMs + model.durationMs;
  const progressEvery = Math.max(1, Math.floor(model.durationMs / model.tickMs / 200));
  let ticks = 0;

  let t = model.startMs;
  let interrupted = false;
  const pipe: Pipeline = { inFlight: null, pacer, deliveredToMs: model.startMs - model.tickMs };
  for (; t < endMs; t += model.tickMs) {
    if (pacer) {
      await paceTo(pacer, t);
      const warning = ctx.lag?.tick(pacer.wallLagMs(t), t) ?? null;
      if (warning !== null) ctx.onWarning?.(warning);
    }
    if (ctx.signal?.aborted) {
      interrupted = true;
      break;
    }
    clock.advanceTo(t);
    const step = world.step(t);
    truth.observe(step, world);
    edge.observe(step, world);
    ctx.onStep?.(t, world);
    ticks++;
    if ((t + model.tickMs - model.startMs) % model.batchIntervalMs === 0) await deliver(ctx, pipe, t);
    if (ticks % progressEvery === 0) ctx.onProgress?.(t + model.tickMs - model.startMs, model.durationMs, ctx.delivery.stats().packetsSubmitted);
  }
  await deliver(ctx, pipe, Math.max(model.startMs, t - model.tickMs));
  await pipe.inFlight;
  ctx.onProgress?.(model.durationMs, model.durationMs, ctx.delivery.stats().packetsSubmitted);
  const d = ctx.delivery.stats();
  return { ticks, packetsSent: d.packetsSubmitted, batchesSent: d.batchesPublished, sensorSeconds: (model.sensors.length * (Math.min(t, endMs) - model.startMs)) / 1000, interrupted };
}

async function paceTo(pacer: ScaledWallClock, simMs: number): Promise<void> {
  const delay = pacer.wallDelayUntil(simMs);
  if (delay > 1) await sleepWall(delay);
}

/** The delivery still in flight: its hives wait for acks while the world simulates the next interval. */
interface Pipeline {
  inFlight: Promise<void> | null;
  pacer: ScaledWallClock | null;
  /** Last sensing instant handed to a delivery. */
  deliveredToMs: number;
}

/**
 * Edge → delivery → cloud for everything produced up to `atMs`, pipelined: the previous
 * interval's delivery (publishes, acks, `advanceTo`) is awaited first, then this one is
 * started and left running while the loop simulates the next interval — the world, truth and
 * edge never read what the hives or the platform are doing, so the platform (in its own
 * thread) ingests while the simulator moves on, and every message and call still reaches it
 * in the same order.
 */
async function deliver(ctx: LoopContext, pipe: Pipeline, atMs: number): Promise<void> {
  // Handed over before the previous delivery is done: the meshes take these packets while the
  // hives still wait for the platform's acks (the stage keeps every mesh's order; DeliveryStage).
  ctx.delivery.submit(await ctx.edge.drain());
  if (pipe.inFlight) await pipe.inFlight;
  pipe.inFlight = null;
  // The next delivery is one batch interval on: the platform moves its clock there at once.
  const fromMs = pipe.deliveredToMs + ctx.model.tickMs;
  pipe.deliveredToMs = atMs;
  const inFlight = ctx.delivery
    .flush(atMs)
    .then(() => ctx.platform.advanceTo(atMs, atMs + ctx.model.batchIntervalMs))
    .then(() => noteStored(ctx, pipe.pacer, fromMs, atMs));
  // Awaited at the next delivery (or the end); a failure surfaces there, never unhandled.
  inFlight.catch(() => undefined);
  pipe.inFlight = inFlight;
  // One turn of the event loop, so the hives' publishes leave before the next ticks run.
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A paced run's delivery is stored (acked, and the platform moved on): each sensing instant's wall age. */
function noteStored(ctx: LoopContext, pacer: ScaledWallClock | null, fromMs: number, toMs: number): void {
  if (!pacer || !ctx.lag) return;
  for (let s = fromMs; s <= toMs; s += ctx.model.tickMs) ctx.lag.stored(pacer.wallLagMs(s));
}
