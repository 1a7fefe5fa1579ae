import { parentPort, workerData } from 'node:worker_threads';
import { systemWallTime } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import { FaultTimeline } from '../mesh/faults.js';
import { createHiveGroup, type HiveGroup, type MeshHiveEndpoint } from './hive-group.js';
import type {
  HiveThreadConnect,
  HiveThreadInit,
  HiveThreadPost,
  HiveThreadRequest,
  HiveThreadResponse,
  HiveThreadReturned,
  HiveThreadStarted,
} from './hive-thread-messages.js';
import { connectHive, type HiveLink } from './mqtt-hive.js';
import { DeferredHiveLink } from './deferred-link.js';
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

async function connect(channel: NonNullable<typeof port>, links: HiveLink[]): Promise<HiveGroup> {
  const { model } = init;
  const byId = new Map(model.hives.map((h) => [h.id, h]));
  const hives = init.hiveIds.map((id) => {
    const h = byId.get(id);
    if (!h) throw new Error(`hive thread: no hive ${id} in the scenario`);
    return h;
  });
  // The meshes first: they need no broker, so a thread started while the platform is still
  // starting builds them meanwhile. Each endpoint gets its link once logged in, before the
  // ready message, so no flush can reach an endpoint without one.
  const endpoints: Array<{ -readonly [K in keyof MeshHiveEndpoint]: MeshHiveEndpoint[K] }> = hives.map((h) => ({
    id: h.id,
    serial: h.serial,
    firmwareVersion: h.firmwareVersion,
    link: notLoggedIn,
  }));
  const group = createHiveGroup(model, endpoints, new FaultTimeline(model.faults));
  const { brokerUrl } = await connectMessage(channel);
  let next = 0;
  // Over every hive of the model: the ramp's seeded choice does not depend on the thread layout.
  const onlineAt = onlineTimesOf(model);
  const login = async (): Promise<void> => {
    for (let i = next++; i < hives.length; i = next++) {
      const h = hives[i] as (typeof hives)[number];
      const connect = () =>
        connectHive({ brokerUrl, serial: h.serial, password: h.password, ackTimeoutMs: init.ackTimeoutMs });
      // A hive a ramp brings online later logs in then (hive-group.ts), not now.
      const link =
        (onlineAt.get(h.id) ?? Number.POSITIVE_INFINITY) > model.startMs
          ? new DeferredHiveLink(connect)
          : await connect();
      links.push(link);
      (endpoints[i] as (typeof endpoints)[number]).link = link;
    }
  };
  const logins = await Promise.allSettled(Array.from({ length: Math.min(CONNECTS_IN_FLIGHT, hives.length) }, login));
  const failed = logins.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return group;
}

/** The run's `HiveThreadConnect`: the first message a thread receives. */
function connectMessage(channel: NonNullable<typeof port>): Promise<HiveThreadConnect> {
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
  links: readonly HiveLink[],
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
      for (const link of links) await link.close();
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

async function main(channel: NonNullable<typeof port>): Promise<void> {
  const links: HiveLink[] = [];
  let group: HiveGroup;
  try {
    group = await connect(channel, links);
  } catch (err) {
    for (const link of links) await link.close().catch(() => undefined);
    channel.postMessage({ kind: 'failed', ...failure(err) } satisfies HiveThreadStarted);
    return;
  }
  channel.postMessage({ kind: 'ready' } satisfies HiveThreadStarted);
  // Requests one at a time, in order. Submitted packets enter the meshes once the flush
  // received before them has cut its batches (HiveGroups in mesh-delivery.ts), while it may
  // still wait for acks; a flush starts once the submits received before it are in.
  let chain = Promise.resolve();
  let flushHanded = Promise.resolve();
  let submitted: Promise<void> = Promise.resolve();
  channel.on('message', (r: HiveThreadRequest | HiveThreadPost) => {
    if (r.op === 'submit') {
      const after = Promise.all([submitted, flushHanded]);
      const packets = r.packets;
      // Handed back once its last packet has left the meshes; transferring detaches it here, so nothing can read it after.
      const release = (): void =>
        channel.postMessage({ kind: 'returned', packets } satisfies HiveThreadReturned, [
          packets.buffer as ArrayBuffer,
        ]);
      submitted = after.then(() => submitInSlices(group, packets, release));
      submitted.catch(() => undefined);
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
        reply = { kind: 'result', id: r.id, value: await handle(group, links, r, handed) };
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

void main(port);
