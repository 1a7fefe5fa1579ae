import { FaultTimeline } from '../mesh/faults.js';
import { startSteps, type StartStep, type Started } from '../core/start-steps.js';
import type { ScenarioModel } from '../scenario/model.js';
import { onlineTimesOf } from '../scenario/ramp.js';
import { closeLinks, hiveLink } from './deferred-link.js';
import { createHiveGroup } from './hive-group.js';
import { spawnHiveThreads, type HiveThreadOptions, type HiveThreadsStarting } from './hive-threads.js';
import type { HiveGroups } from './mesh-delivery.js';
import type { HiveLink } from './mqtt-hive.js';

/**
 * A run's hives, started as named steps (core/start-steps.ts) in two halves around the
 * platform's start: `startRunHives` spawns the hive threads at once (each builds its meshes
 * while the platform starts), `connect` logs the hives in to the platform's broker once it is
 * up. Without hive threads the hives log in from the run's thread, one at a time, and their
 * meshes are built there after the logins (the run's `hives` start-up phase times `connect`).
 */
export interface RunHives {
  /** Runs the steps (`HIVE_THREAD_STEPS` or `IN_THREAD_STEPS`); resolves with the groups the run flushes. */
  connect(brokerUrl: string): Promise<HiveGroups>;
  /** Stops what started, last first, and ends hive threads never connected; safe at any point, and more than once. */
  close(): Promise<void>;
}

/** What the hive start-up steps share. */
interface HiveParts {
  readonly model: ScenarioModel;
  readonly ackTimeoutMs: number;
  readonly brokerUrl: string;
  /** The spawned hive threads (none: the hives are simulated in the run's thread). */
  readonly threads: HiveThreadsStarting | null;
  /** Each hive's link by hive id, in scenario order (the hives of the run's thread). */
  readonly links: Map<string, HiveLink>;
  groups: HiveGroups;
}

/** With hive threads: each thread logs its hives in (hive-worker.ts has the thread's own steps). */
const HIVE_THREAD_STEPS: readonly StartStep<HiveParts>[] = [
  {
    name: 'hive threads',
    start: async (p) => {
      const groups = await (p.threads as HiveThreadsStarting).connect(p.brokerUrl);
      p.groups = groups;
      return () => groups.close();
    },
  },
];

/** Without: the run's thread logs each hive in, as a device would, then builds the meshes. */
const IN_THREAD_STEPS: readonly StartStep<HiveParts>[] = [
  // First in, last out: every link a login opened closes, also when a later login fails.
  { name: 'hive links', start: (p) => () => closeLinks(p.links.values()) },
  {
    name: 'hive logins',
    start: async (p) => {
      const { model } = p;
      const broker = { brokerUrl: p.brokerUrl, ackTimeoutMs: p.ackTimeoutMs };
      const onlineAt = onlineTimesOf(model);
      for (const h of model.hives)
        p.links.set(h.id, await hiveLink(h, broker, (onlineAt.get(h.id) ?? Number.POSITIVE_INFINITY) <= model.startMs));
    },
  },
  {
    name: 'meshes',
    start: (p) => {
      p.groups = inThreadGroups(p.model, p.links);
    },
  },
];

/** Starts the run's hives: with `threads` > 0 the hive threads are spawned now; `connect` does the rest. */
export function startRunHives(model: ScenarioModel, opts: HiveThreadOptions): RunHives {
  const threads = opts.threads > 0 ? spawnHiveThreads(model, opts) : null;
  let started: Started | null = null;
  return {
    async connect(brokerUrl) {
      const parts = {
        model,
        ackTimeoutMs: opts.ackTimeoutMs,
        brokerUrl,
        threads,
        links: new Map(),
      } as unknown as HiveParts;
      started = await startSteps(threads ? HIVE_THREAD_STEPS : IN_THREAD_STEPS, parts);
      return parts.groups;
    },
    async close() {
      if (started) await started.stop();
      // Threads spawned for a run whose start failed before they were connected.
      else await threads?.abandon();
    },
  };
}

/** One group of every hive, in this thread; its links are the start-up's to close. */
function inThreadGroups(model: ScenarioModel, links: ReadonlyMap<string, HiveLink>): HiveGroups {
  const endpoints = model.hives.flatMap((h) => {
    const link = links.get(h.id);
    return link ? [{ id: h.id, serial: h.serial, firmwareVersion: h.firmwareVersion, link }] : [];
  });
  const group = createHiveGroup(model, endpoints, new FaultTimeline(model.faults));
  return {
    submit: (packets) => group.submit(packets),
    flush: (atMs) => group.flush(atMs),
    report: (nowMs) => Promise.resolve([group.report(nowMs)]),
    close: () => Promise.resolve(),
  };
}
