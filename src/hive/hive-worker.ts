import { parentPort, workerData } from 'node:worker_threads';
import { isAppError } from '../core/errors.js';
import { FaultTimeline } from '../mesh/faults.js';
import { createHiveGroup, type HiveGroup, type MeshHiveEndpoint } from './hive-group.js';
import type { HiveThreadInit, HiveThreadRequest, HiveThreadResponse, HiveThreadStarted } from './hive-thread-messages.js';
import { connectHive, type HiveLink } from './mqtt-hive.js';
import { readPackets } from './packet-transfer.js';

/**
 * A hive thread: connects its share of the hives to the broker (each logs in as a device
 * would), then simulates their meshes and uplinks flush by flush, answering the run's
 * requests one at a time, in arrival order.
 */
const port = parentPort;
if (!port) throw new Error('hive worker must run in a worker thread');
const init = workerData as HiveThreadInit;

function failure(err: unknown): { code: string | null; message: string } {
  return { code: isAppError(err) ? err.code : null, message: err instanceof Error ? err.message : String(err) };
}

async function connect(links: HiveLink[]): Promise<HiveGroup> {
  const { model } = init;
  const byId = new Map(model.hives.map((h) => [h.id, h]));
  const endpoints: MeshHiveEndpoint[] = [];
  for (const id of init.hiveIds) {
    const h = byId.get(id);
    if (!h) throw new Error(`hive thread: no hive ${id} in the scenario`);
    const link = await connectHive({ brokerUrl: init.brokerUrl, serial: h.serial, password: h.password, ackTimeoutMs: init.ackTimeoutMs });
    links.push(link);
    endpoints.push({ id: h.id, serial: h.serial, firmwareVersion: h.firmwareVersion, link });
  }
  return createHiveGroup(model, endpoints, new FaultTimeline(model.faults));
}

async function handle(group: HiveGroup, links: readonly HiveLink[], r: HiveThreadRequest): Promise<Extract<HiveThreadResponse, { kind: 'result' }>['value']> {
  switch (r.op) {
    case 'flush':
      group.submit(readPackets(r.packets, init.model.sensors));
      return group.flush(r.atMs);
    case 'report':
      return group.report(r.nowMs);
    case 'close':
      for (const link of links) await link.close();
      return null;
  }
}

async function main(channel: NonNullable<typeof port>): Promise<void> {
  const links: HiveLink[] = [];
  let group: HiveGroup;
  try {
    group = await connect(links);
  } catch (err) {
    for (const link of links) await link.close().catch(() => undefined);
    channel.postMessage({ kind: 'failed', ...failure(err) } satisfies HiveThreadStarted);
    return;
  }
  channel.postMessage({ kind: 'ready' } satisfies HiveThreadStarted);
  let chain = Promise.resolve();
  channel.on('message', (r: HiveThreadRequest) => {
    chain = chain.then(async () => {
      let reply: HiveThreadResponse;
      try {
        reply = { kind: 'result', id: r.id, value: await handle(group, links, r) };
      } catch (err) {
        reply = { kind: 'error', id: r.id, ...failure(err) };
      }
      channel.postMessage(reply);
      if (r.op === 'close') channel.close();
    });
  });
}

void main(port);
