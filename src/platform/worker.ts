import { parentPort, workerData } from 'node:worker_threads';
import { isAppError } from '../core/errors.js';
import { startPlatform, type Platform } from './platform.js';
import type { PlatformConfig } from './config.js';
import type {
  PlatformLivePost,
  PlatformRequest,
  PlatformResponse,
  PlatformThreadFailed,
  PlatformThreadReady,
} from './thread-messages.js';

/**
 * The platform's worker thread: builds the catalogue from the organisations it is given,
 * starts the platform on a driven clock and answers the simulator's requests one at a time,
 * in arrival order (so `setTime` → MQTT traffic → `advanceTo` keep their order).
 */
const port = parentPort;
if (!port) throw new Error('platform worker must run in a worker thread');
// Frozen again: structured cloning hands the thread a plain copy.
const config = Object.freeze(workerData as PlatformConfig);

function failure(err: unknown): { code: string | null; message: string } {
  return { code: isAppError(err) ? err.code : null, message: err instanceof Error ? err.message : String(err) };
}

async function handle(platform: Platform, r: PlatformRequest): Promise<unknown> {
  switch (r.op) {
    case 'setTime':
      return platform.setTime(r.t);
    case 'advanceTo':
      return r.next === null ? platform.advanceTo(r.t) : platform.advanceTo(r.t, r.next);
    case 'finish':
      return platform.finish();
    case 'stoppedAt':
      return platform.stoppedAt(r.t);
    case 'counters':
      return platform.reads.counters();
    case 'deadLetters':
      return platform.reads.deadLetters();
    case 'presenceMinutes':
      return platform.reads.presenceMinutes(r.key);
    case 'trafficMinutes':
      return platform.reads.trafficMinutes(r.key);
    case 'webhookStats':
      return platform.reads.webhookStats();
    case 'eventEnvelopes':
      return platform.reads.eventEnvelopes(r.afterId, r.limit);
    case 'report':
      return platform.reads.report(r.request);
    case 'restartBroker':
      if (!platform.restartBroker) throw new Error('the platform has no embedded broker to restart');
      return platform.restartBroker(r.filters);
    case 'close':
      return platform.close();
  }
}

async function main(channel: NonNullable<typeof port>): Promise<void> {
  let platform: Platform;
  try {
    platform = await startPlatform(config);
  } catch (err) {
    channel.postMessage({ kind: 'failed', ...failure(err) } satisfies PlatformThreadFailed);
    return;
  }
  channel.postMessage({
    kind: 'ready',
    brokerUrl: platform.brokerUrl,
    apiUrl: platform.apiUrl,
    dbPath: platform.dbPath,
    canRestartBroker: platform.restartBroker !== null,
    live: platform.publishLive !== undefined,
  } satisfies PlatformThreadReady);
  // One request at a time, in order: a chain of promises.
  let chain = Promise.resolve();
  channel.on('message', (r: PlatformRequest | PlatformLivePost) => {
    if (r.op === 'publishLive') {
      platform.publishLive?.(r.truth);
      return;
    }
    chain = chain.then(async () => {
      let reply: PlatformResponse;
      try {
        const value = await handle(platform, r);
        reply = { kind: 'result', id: r.id, value: value ?? null };
      } catch (err) {
        reply = { kind: 'error', id: r.id, ...failure(err) };
      }
      channel.postMessage(reply);
      if (r.op === 'close') channel.close();
    });
  });
}

void main(port);
