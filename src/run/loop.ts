import { ScaledWallClock, systemWallTime, type VirtualClock } from '../core/clock.js';
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
 * observes it; at every batch interval the edge hands over its packets and the delivery stage
 * carries them to the cloud, while the world simulates on; the loop waits for the cloud's
 * acknowledgements of the interval before the previous one (`DELIVERIES_IN_FLIGHT`). At
 * `--speed max` the simulator never outruns the cloud by more than that, and every call
 * reaches the hives and the platform in one order, so the run is deterministic.
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
  const pipe = newPipeline(model, pacer);
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
    if (ticks % progressEvery === 0)
      ctx.onProgress?.(t + model.tickMs - model.startMs, model.durationMs, ctx.delivery.stats().packetsSubmitted);
  }
  await deliver(ctx, pipe, Math.max(model.startMs, t - model.tickMs));
  await settle(pipe);
  ctx.onProgress?.(model.durationMs, model.durationMs, ctx.delivery.stats().packetsSubmitted);
  const d = ctx.delivery.stats();
  return {
    ticks,
    packetsSent: d.packetsSubmitted,
    batchesSent: d.batchesPublished,
    sensorSeconds: (model.sensors.length * (Math.min(t, endMs) - model.startMs)) / 1000,
    interrupted,
  };
}

async function paceTo(pacer: ScaledWallClock, simMs: number): Promise<void> {
  const delay = pacer.wallDelayUntil(simMs);
  if (delay > 1) await sleepWall(delay);
}

/**
 * Deliveries the loop lets run at once: at a batch interval it waits only for the delivery
 * before the previous one. One delivery's path — the hive thread's meshes, then publishing,
 * the platform storing the interval's batches and acking, then `advanceTo` — is serial
 * across threads and at 100,000 model sensors about as long as the interval itself, so with
 * one in flight every tick after a flush waited for it; with two the loop is bound by the
 * busiest thread's work per interval instead of the sum of them. Bounded: at most this many
 * intervals' packets wait in the hives and the platform.
 */
export const DELIVERIES_IN_FLIGHT = 2;

/** The deliveries under way: hives wait for acks and the platform stores while the world simulates the next intervals. */
interface Pipeline {
  /** Started and not yet awaited by the loop, oldest first (at most `DELIVERIES_IN_FLIGHT`). */
  inFlight: Array<Promise<void>>;
  /** Resolves once the latest delivery's flush has been called (or given up): the next packets may be submitted. */
  flushCalled: Promise<void>;
  /** The latest delivery: the next one's flush starts after it (the platform sees every call in order). */
  last: Promise<void>;
  pacer: ScaledWallClock | null;
  /** Last sensing instant handed to a delivery. */
  deliveredToMs: number;
  /** `OCCUSIM_LOOP_TRACE=1`: wall times of the hand-off (stderr), to see what a tick waits on. */
  trace: { lastMs: number; flushMs: number; advanceMs: number } | null;
}

/**
 * A diagnostic, not a result: with `OCCUSIM_LOOP_TRACE=1` each delivery writes one stderr line
 * (wall ms): computing since the last delivery, the edge's drain, the wait for an earlier
 * delivery, and the last finished delivery's flush (publish → acks) and `advanceTo`.
 */
const TRACE = process.env.OCCUSIM_LOOP_TRACE === '1';

function newPipeline(model: ScenarioModel, pacer: ScaledWallClock | null): Pipeline {
  const done = Promise.resolve();
  return {
    inFlight: [],
    flushCalled: done,
    last: done,
    pacer,
    deliveredToMs: model.startMs - model.tickMs,
    trace: TRACE ? { lastMs: systemWallTime(), flushMs: 0, advanceMs: 0 } : null,
  };
}

/**
 * Edge → delivery → cloud for everything produced up to `atMs`, pipelined: the world, truth and
 * edge never read what the hives or the platform are doing, so the loop simulates on while
 * up to `DELIVERIES_IN_FLIGHT` deliveries run in the hive and platform threads. The calls
 * still reach the stage and the platform in one order, the same as one delivery at a time:
 * these packets are submitted once the previous flush has been called (they enter the meshes
 * after it cut its batches: DeliveryStage), and this flush starts once the previous delivery
 * is done, acks and `advanceTo` included. So `--speed max` results do not depend on it.
 */
async function deliver(ctx: LoopContext, pipe: Pipeline, atMs: number): Promise<void> {
  const tr = pipe.trace;
  const t0 = systemWallTime();
  const packets = await ctx.edge.drain();
  const t1 = systemWallTime();
  while (pipe.inFlight.length >= DELIVERIES_IN_FLIGHT) await pipe.inFlight.shift();
  const t2 = systemWallTime();
  // Paced runs: the wait is the loop's share of the lag the hand-off causes.
  if (pipe.pacer) ctx.lag?.waited(t2 - t1);
  if (tr) {
    process.stderr.write(
      `loop-trace at=${atMs} compute=${(t0 - tr.lastMs).toFixed(0)} drain=${(t1 - t0).toFixed(0)} wait=${(t2 - t1).toFixed(0)} lastFlush=${tr.flushMs.toFixed(0)} lastAdvance=${tr.advanceMs.toFixed(0)}\n`,
    );
    tr.lastMs = t2;
  }
  // The next delivery is one batch interval on: the platform moves its clock there at once.
  const fromMs = pipe.deliveredToMs + ctx.model.tickMs;
  pipe.deliveredToMs = atMs;
  const previous = { called: pipe.flushCalled, done: pipe.last };
  let called = (): void => undefined;
  pipe.flushCalled = new Promise<void>((resolve) => (called = resolve));
  // Handed over before the previous delivery is done: the meshes take these packets while the
  // hives still wait for the platform's acks. The buffer is the delivery's from here (it hands
  // it back to the edge: DeliveryStage.submit); nothing below reads `packets`.
  const submitted = previous.called.then(() => ctx.delivery.submit(packets));
  const delivery = (async () => {
    try {
      await submitted;
      await previous.done;
      const f0 = systemWallTime();
      const flushing = ctx.delivery.flush(atMs);
      called();
      await flushing;
      const f1 = systemWallTime();
      await ctx.platform.advanceTo(atMs, atMs + ctx.model.batchIntervalMs);
      if (tr) [tr.flushMs, tr.advanceMs] = [f1 - f0, systemWallTime() - f1];
      noteStored(ctx, pipe.pacer, fromMs, atMs);
    } finally {
      // A failed delivery still lets the next one on, which fails with it (it awaits this one).
      called();
    }
  })();
  // Awaited by the loop later (or at the end); a failure surfaces there, never unhandled.
  delivery.catch(() => undefined);
  pipe.last = delivery;
  pipe.inFlight.push(delivery);
  // One turn of the event loop, so the hives' publishes leave before the next ticks run.
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Every delivery started so far is done (the end of the loop): the first failure, if any, is thrown. */
async function settle(pipe: Pipeline): Promise<void> {
  while (pipe.inFlight.length > 0) await pipe.inFlight.shift();
}

/** A paced run's delivery is stored (acked, and the platform moved on): each sensing instant's wall age. */
function noteStored(ctx: LoopContext, pacer: ScaledWallClock | null, fromMs: number, toMs: number): void {
  if (!pacer || !ctx.lag) return;
  for (let s = fromMs; s <= toMs; s += ctx.model.tickMs) ctx.lag.stored(pacer.wallLagMs(s));
}
