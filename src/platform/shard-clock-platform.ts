import { randomBytes } from 'node:crypto';
import { startShardClockPublisher } from '../broker/shard-clock.js';
import type { CloudCounters } from '../cloud/cloud.js';
import type { Platform } from './platform.js';
import type { PlatformReads, ReportData } from './reads.js';
import { describeLocation, type StoreLocation } from '../store/location.js';

/**
 * A simulator shard's stand-in for a platform when `occusim serve --shards n` processes ingest
 * its hives (`run --shard i/n --external-ingest`, docs/scale-out.md): no broker, cloud or store
 * of its own. Its hives publish to the external broker and wait for the ingest processes' acks;
 * where the run loop tells a platform the time (`advanceTo`, after each delivery is acked),
 * this publishes it on the shards' clock channel, and `finish` says done.
 *
 * Its reads hold no minutes: the whole run's occupancy is in the ingest processes' store once
 * they have finished. The run reports its ledger from its hives' acks (`countersFromAcks`).
 */
export interface ShardClockPlatformOptions {
  brokerUrl: string;
  shard: { index: number; count: number };
  /** The shared store the ingest processes write; null when not given. */
  store: StoreLocation | null;
}

const NO_COUNTERS: CloudCounters = {
  batchesReceived: 0,
  batchesProcessed: 0,
  duplicateBatches: 0,
  packetsProcessed: 0,
  packetsStoredBefore: 0,
  deadLettered: 0,
  eventsEmitted: 0,
  lateInWindow: 0,
  lateBeyondWindow: 0,
};

function emptyReads(): PlatformReads {
  const data: ReportData = {
    counters: NO_COUNTERS,
    latenciesMs: { values: new Float64Array(0), counts: new Float64Array(0) },
    presence: {},
    traffic: {},
    trafficSpaces: [],
    trafficOccupancy: {},
  };
  return {
    counters: () => Promise.resolve({ ...NO_COUNTERS }),
    presenceMinutes: () => Promise.resolve([]),
    trafficMinutes: () => Promise.resolve([]),
    deadLetters: () => Promise.resolve([]),
    eventEnvelopes: () => Promise.resolve([]),
    report: () => Promise.resolve({ ...data, counters: { ...NO_COUNTERS } }),
    webhookStats: () => Promise.resolve(null),
  };
}

export async function startShardClockPlatform(o: ShardClockPlatformOptions): Promise<Platform> {
  const clock = await startShardClockPublisher(
    o.brokerUrl,
    o.shard,
    `occusim-shard-clock-${o.shard.index}-${randomBytes(6).toString('hex')}`,
  );
  let reached = -Infinity;
  return {
    brokerUrl: o.brokerUrl,
    apiUrl: null,
    dbPath: o.store === null ? '(the ingest processes’ store)' : describeLocation(o.store),
    inOwnThread: false,
    reads: emptyReads(),
    // The ingest processes' clocks move on the channel only: a message's reception time is theirs.
    setTime: () => Promise.resolve(),
    advanceTo: async (t) => {
      reached = Math.max(reached, t);
      await clock.publish(reached, false);
    },
    finish: () => clock.publish(Math.max(reached, 0), true),
    // The drain mark lives in the store, which belongs to the ingest processes: a shard without a
    // platform has none to mark (resuming a run with --external-ingest is not supported).
    stoppedAt: () => Promise.resolve(),
    restartBroker: null,
    close: () => clock.close(),
  };
}
