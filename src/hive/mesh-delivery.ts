import type { VirtualClock } from '../core/clock.js';
import { ackTopic, allHivesFilter } from '../core/topics.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { EdgePackets } from '../edge/edge-packets.js';
import { FaultTimeline } from '../mesh/faults.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { DeliveryStage, DeliveryStats } from './delivery.js';
import { combineDeliveryReports, type HiveGroupReport } from './delivery-report.js';
import type { GroupFlush } from './hive-group.js';
import type { DeliveryReport, HiveLedger, RampStepReport } from './ledger.js';
import { onlineTimesOf, rampProgress } from '../scenario/ramp.js';
import { formatDuration } from '../core/time.js';

/**
 * Delivery through the simulated mesh and hives (docs/protocol.md): sensors → TSCH mesh
 * (MeshSim) → hive batching, store-and-forward and retransmission (HiveNode) → the real MQTT
 * link → cloud, whose end-to-end acks release the hive's buffer. Everything is decided in
 * sim time from seeded streams; hives publish one message at a time, in scenario order, each
 * waiting for the cloud's ack, so captures and results are deterministic at `--speed max`.
 *
 * The hives themselves are simulated by `HiveGroups`: in this thread (one group of every
 * hive), or spread over hive threads (hive-threads.ts). This stage does what is the run's,
 * not a hive's: the platform's clock before each flush, broker restarts, the end-of-run drain
 * and the report.
 */
export interface MeshDeliveryStage extends DeliveryStage {
  /** After the last flush: keeps flushing in sim time until the mesh and the hives are empty (bounded). */
  drain(): Promise<void>;
  report(): Promise<DeliveryReport>;
  close(): Promise<void>;
}

/**
 * Where the hives are simulated. `submit` comes after the previous `flush` was called (that
 * flush's hives have taken what arrived and cut their batches: what they still do is publish
 * and wait for acks), so the next interval's packets cross the meshes while the platform
 * ingests the previous one, and every mesh sees the same sequence as without the overlap.
 */
export interface HiveGroups {
  submit(packets: EdgePackets): void;
  flush(atMs: number): Promise<GroupFlush>;
  /** Every group's report parts at `nowMs` (any order: the report puts hives in scenario order). */
  report(nowMs: number): Promise<HiveGroupReport[]>;
  close(): Promise<void>;
}

/** Longest the end-of-run drain continues past the end, sim time. */
const MAX_DRAIN_MS = 6 * 3_600_000;

export interface MeshDeliveryHooks {
  /**
   * Restarts the broker and resolves once every client is back (the broker_restart fault): the
   * cloud and the hives logged in by the last flush, at `lastFlushMs` (a ramp's later hives log in
   * at their first flush online, after the restart).
   */
  restartBroker?: (lastFlushMs: number) => Promise<void>;
  /** Before each flush at `atMs`: the platform's clock is moved there, so what it receives is received at `atMs`. */
  beforeFlush?: (atMs: number) => Promise<void>;
}

export function createDelivery(
  model: ScenarioModel,
  groups: HiveGroups,
  clock: VirtualClock,
  hooks: MeshDeliveryHooks = {},
): MeshDeliveryStage {
  const faults = new FaultTimeline(model.faults);
  const hiveOrder = new Map(model.hives.map((h, i) => [h.serial, i]));
  let lastFlushMs = model.startMs;
  // Submitted packets enter the groups once the previous flush has been handed to them (see HiveGroups).
  let flushHanded: Promise<void> = Promise.resolve();
  let submitted: Promise<void> = Promise.resolve();
  let empty = true;
  const stats: DeliveryStats = { packetsSubmitted: 0, batchesPublished: 0 };

  let brokerRestarts = 0;
  const flush = async (atMs: number): Promise<number> => {
    let handed = (): void => undefined;
    flushHanded = new Promise<void>((resolve) => (handed = resolve));
    // The packets submitted before this flush (not those of the next, which wait for it).
    const before = submitted;
    try {
      return await flushGroups(atMs, before, handed);
    } finally {
      handed();
    }
  };
  const flushGroups = async (atMs: number, before: Promise<void>, handed: () => void): Promise<number> => {
    await hooks.beforeFlush?.(atMs);
    // Between two flushes nothing is in flight: the restart is deterministic, and the hives'
    // buffers cover whatever the restarted broker forgot.
    for (const _ of faults.brokerRestartsIn(lastFlushMs, atMs)) {
      if (!hooks.restartBroker)
        throw new AppError(ErrorCodes.NOT_IMPLEMENTED, 'broker_restart faults need the embedded broker (not --broker)');
      await hooks.restartBroker(lastFlushMs);
      brokerRestarts++;
    }
    await before;
    const flushing = groups.flush(atMs);
    handed();
    const r = await flushing;
    lastFlushMs = atMs;
    stats.packetsSubmitted += r.submitted;
    stats.batchesPublished += r.published;
    empty = r.empty;
    return r.published;
  };

  return {
    submit(packets) {
      const after = Promise.all([submitted, flushHanded]);
      submitted = after.then(() => groups.submit(packets));
      // Surfaces at the next flush, which awaits it; never an unhandled rejection meanwhile.
      submitted.catch(() => undefined);
    },
    flush,
    async drain() {
      const endMs = lastFlushMs;
      for (let t = endMs + model.batchIntervalMs; t <= endMs + MAX_DRAIN_MS && !empty; t += model.batchIntervalMs) {
        clock.advanceTo(t);
        await flush(t);
      }
    },
    stats: () => ({ ...stats }),
    report: async () => {
      const combined = combineDeliveryReports(await groups.report(clock.now()), hiveOrder);
      return {
        ...combined,
        brokerRestarts,
        ...(model.ramp?.length ? { ramp: rampReport(model, combined.hives) } : {}),
      };
    },
    close: () => groups.close(),
  };
}

/**
 * The broker-restart fault through the platform's interface: restart, then wait until the
 * cloud's uplink subscription and the ack subscription of every hive logged in by then are back.
 */
export function brokerRestartHook(
  model: ScenarioModel,
  restartBroker: ((waitForFilters: readonly string[]) => Promise<void>) | null,
): MeshDeliveryHooks {
  if (!restartBroker) return {};
  const onlineAt = onlineTimesOf(model);
  // A hive is logged in from its first flush online on (hive-group.ts): waiting for one that is
  // not yet would wait for a subscription that never comes (a ramp with a broker restart).
  const loggedInBy = (t: number): string[] =>
    model.hives.filter((h) => (onlineAt.get(h.id) ?? model.startMs) <= t).map((h) => ackTopic(h.serial));
  return { restartBroker: (lastFlushMs) => restartBroker([allHivesFilter('uplink'), ...loggedInBy(lastFlushMs)]) };
}

/** Per ramp step, from the seeded schedule and, for `connected`, the hives' own ledgers (scenario/ramp.ts). */
function rampReport(model: ScenarioModel, ledgers: readonly HiveLedger[]): RampStepReport[] {
  // This run's hives only: a shard's schedule covers the whole fleet's (shard.ts keeps it whole).
  const mine = new Set(model.hives.map((h) => h.id));
  const onlineAt = new Map([...onlineTimesOf(model)].filter(([id]) => mine.has(id)));
  const sent = new Set(ledgers.filter((l) => l.heartbeats > 0 || l.batches > 0).map((l) => l.hive));
  const serialOf = new Map(model.hives.map((h) => [h.id, h.serial]));
  return rampProgress(model.ramp ?? [], onlineAt, model.hives.length, model.startMs).map((p) => {
    let connected = 0;
    for (const [id, t] of onlineAt) if (t === model.startMs + p.atMs && sent.has(serialOf.get(id) ?? '')) connected++;
    return {
      at: p.atMs === 0 ? '0s' : formatDuration(p.atMs),
      cameOnline: p.cameOnline,
      online: p.online,
      hives: p.hives,
      connected,
    };
  });
}
