import { parentPort, workerData } from 'node:worker_threads';
import { systemWallTime } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import { FaultTimeline } from '../mesh/faults.js';
import { createHiveGroup, type HiveGroup } from './hive-group.js';
import type { MeshHiveEndpoint } from './hive-rig.js';
import type {
  HiveThreadConnect,
  HiveThreadInit,
  HiveThreadPost,
  HiveThreadRequest,
  HiveThreadResponse,
  HiveThreadReturned,
  HiveThreadStarted,
} from './hive-thread-messages.js';
import type { HiveLink } from './mqtt-hive.js';
import { closeLinks, hiveLink } from './deferred-link.js';
import { startSteps, type StartStep, type Started } from '../core/start-steps.js';
import { onlineTimesOf } from '../scenario/ramp.js';

/**
 * A hive thread: builds its share of the hives' meshes, logs the hives in to the broker (each
 * as a device would), then simulates their meshes and uplinks flush by flush, answering the
 * run's requests one at a time, in arrival order.
 */
const port = parentPort;
if (!port) throw new Error('hive worker must run in a worker thread');
const init = workerData as HiveThreadInit;
/** A diagnostic (src/run/loop.ts): each flush's wall ms on stderr. */
const TRACE = process.env.OCCUSIM_LOOP_TRACE === '1';

function failure(err: unknown): { code: string | null; message: string } {
  return { code: isAppError(err) ? err.code : null, message: err instanceof Error ? err.message : String(err) };
}

/** Hive logins in flight at once: the broker answers each CONNECT in a round trip, one at a time would take 600 of them in a row. */
const CONNECTS_IN_FLIGHT = 16;

type Channel = NonNullable<typeof port>;
type HiveModel = HiveThreadInit['model']['hives'][number];

/** What the thread's start-up steps share. */
interface ThreadParts {
  readonly channel: Channel;
  /** The thread's hives, in scenario order, and their endpoints (each gets its link once logged in). */
  readonly hives: readonly HiveModel[];
  readonly endpoints: Array<{ -readonly [K in keyof MeshHiveEndpoint]: MeshHiveEndpoint[K] }>;
  readonly links: HiveLink[];
  group: HiveGroup;
  brokerUrl: string;
}

/**
 * The thread's start-up, in order (core/start-steps.ts). The meshes first: they need no
 * broker, so a thread started while the platform is still starting builds them meanwhile.
 * Each endpoint gets its link once logged in, before the ready message, so no flush can reach
 * an endpoint without one.
 */
const THREAD_STEPS: readonly StartStep<ThreadParts>[] = [
  {
    name: 'meshes',
    start: (p) => {
      p.group = createHiveGroup(init.model, p.endpoints, new FaultTimeline(init.model.faults));
    },
  },
  {
    name: 'broker',
    start: async (p) => {
      p.brokerUrl = (await connectMessage(p.channel)).brokerUrl;
    },
  },
  // First in, last out: every link a login opened closes, also when a later login fails.
  { name: 'hive links', start: (p) => () => closeLinks(p.links) },
  { name: 'hive logins', start: logins },
];

function threadParts(channel: Channel): ThreadParts {
  const byId = new Map(init.model.hives.map((h) => [h.id, h]));
  const hives = init.hiveIds.map((id) => {
    const h = byId.get(id);
    if (!h) throw new Error(`hive thread: no hive ${id} in the scenario`);
    return h;
  });
  const endpoints = hives.map((h) => ({
    id: h.id,
    serial: h.serial,
    firmwareVersion: h.firmwareVersion,
    link: notLoggedIn,
  }));
  return { channel, hives, endpoints, links: [], brokerUrl: '' } as unknown as ThreadParts;
}

/** Every hive of the thread logs in, `CONNECTS_IN_FLIGHT` at a time. */
async function logins(p: ThreadParts): Promise<void> {
  const { model } = init;
  const broker = { brokerUrl: p.brokerUrl, ackTimeoutMs: init.ackTimeoutMs };
  // Over every hive of the model: the ramp's seeded choice does not depend on the thread layout.
  const onlineAt = onlineTimesOf(model);
  let next = 0;
  const login = async (): Promise<void> => {
    for (let i = next++; i < p.hives.length; i = next++) {
      const h = p.hives[i] as HiveModel;
      const link = await hiveLink(h, broker, (onlineAt.get(h.id) ?? Number.POSITIVE_INFINITY) <= model.startMs);
      p.links.push(link);
      (p.endpoints[i] as ThreadParts['endpoints'][number]).link = link;
    }
  };
  const done = await Promise.allSettled(Array.from({ length: Math.min(CONNECTS_IN_FLIGHT, p.hives.length) }, login));
  const failed = done.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The run's `HiveThreadConnect`: the first message a thread receives. */
function connectMessage(channel: Channel): Promise<HiveThreadConnect> {
  return new Promise((resolve) => channel.once('message', (m: HiveThreadConnect) => resolve(m)));
}

/** An endpoint's link until its hive has logged in (never used: the thread is not ready before every hive has). */
const notLoggedIn: HiveLink = {
  publish: () => Promise.reject(new Error('hive not logged in yet')),
  transmit: () => Promise.reject(new Error('hive not logged in yet')),
  heartbeat: () => Promise.reject(new Error('hive not logged in yet')),
  stats: () => ({ published: 0, acked: 0, bytesSent: 0 }),
  close: () => Promise.resolve(),
};

async function handle(
  group: HiveGroup,
  started: Started,
  r: HiveThreadRequest,
  handed: () => void,
): Promise<Extract<HiveThreadResponse, { kind: 'result' }>['value']> {
  switch (r.op) {
    case 'flush': {
      // Synchronously up to its first publish, the flush takes what arrived and cuts the batches.
      const t0 = systemWallTime();
      const flushing = group.flush(r.atMs);
      handed();
      if (!TRACE) return flushing;
      const t1 = systemWallTime();
      const out = await flushing;
      process.stderr.write(
        `hive-trace at=${r.atMs} cut=${(t1 - t0).toFixed(0)} publish+acks=${(systemWallTime() - t1).toFixed(0)}\n`,
      );
      return out;
    }
    case 'report':
      return group.report(r.nowMs);
    case 'close':
      await started.stop();
      return null;
  }
}

/**
 * An interval's packets enter the meshes a slice at a time, yielding between slices: the
 * previous flush's acks (and its hives' next batches) are handled meanwhile instead of waiting
 * behind ~1 M packets' mesh walks. The meshes see the same packets in the same order.
 */
const SUBMIT_SLICE = 16_384;

async function submitInSlices(group: HiveGroup, packets: Float64Array, release: () => void): Promise<void> {
  let at = 0;
  do {
    at = group.submitPackets(packets, at, SUBMIT_SLICE, release);
    await new Promise<void>((resolve) => setImmediate(resolve));
  } while (at < packets.length);
}

async function main(channel: Channel): Promise<void> {
  let group: HiveGroup;
  let started: Started;
  try {
    const parts = threadParts(channel);
    started = await startSteps(THREAD_STEPS, parts);
    group = parts.group;
  } catch (err) {
    channel.postMessage({ kind: 'failed', ...failure(err) } satisfies HiveThreadStarted);
    return;
  }
  channel.postMessage({ kind: 'ready' } satisfies HiveThreadStarted);
  answer(channel, group, started);
}

/**
 * Requests one at a time, in order. Submitted packets enter the meshes once the flush received
 * before them has cut its batches (HiveGroups in mesh-delivery.ts), while it may still wait for
 * acks; a flush starts once the submits received before it are in.
 */
function answer(channel: Channel, group: HiveGroup, started: Started): void {
  let chain = Promise.resolve();
  let flushHanded = Promise.resolve();
  let submitted: Promise<void> = Promise.resolve();
  channel.on('message', (r: HiveThreadRequest | HiveThreadPost) => {
    if (r.op === 'submit') {
      submitted = submitAfter(Promise.all([submitted, flushHanded]), channel, group, r.packets);
      return;
    }
    let handed = (): void => undefined;
    if (r.op === 'flush') flushHanded = new Promise<void>((resolve) => (handed = resolve));
    const before = submitted;
    chain = chain.then(async () => {
      let reply: HiveThreadResponse;
      try {
        const w0 = systemWallTime();
        await before;
        if (TRACE && r.op === 'flush')
          process.stderr.write(`hive-trace at=${r.atMs} meshes=${(systemWallTime() - w0).toFixed(0)}\n`);
        reply = { kind: 'result', id: r.id, value: await handle(group, started, r, handed) };
      } catch (err) {
        reply = { kind: 'error', id: r.id, ...failure(err) };
      } finally {
        handed();
      }
      channel.postMessage(reply);
      if (r.op === 'close') channel.close();
    });
  });
}

/** A submit's packets enter the meshes once `after` has resolved. */
function submitAfter(
  after: Promise<unknown>,
  channel: Channel,
  group: HiveGroup,
  packets: Float64Array,
): Promise<void> {
  // Handed back once its last packet has left the meshes; transferring detaches it here, so nothing can read it after.
  const release = (): void =>
    channel.postMessage({ kind: 'returned', packets } satisfies HiveThreadReturned, [packets.buffer as ArrayBuffer]);
  const submitted = after.then(() => submitInSlices(group, packets, release));
  // Surfaces at the next flush, which awaits it; never an unhandled rejection meanwhile.
  submitted.catch(() => undefined);
  return submitted;
}

void main(port);
