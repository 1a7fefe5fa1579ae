import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer, type ServedApi } from '../api/server.js';
import { LiveHub, type LiveTruth } from '../api/live/hub.js';
import { mcpApiExtension } from '../mcp/http-plugin.js';
import { storeSeries } from '../api/reporting/store-series.js';
import type { Store } from '../store/port.js';
import { startBroker, type EmbeddedBroker } from '../broker/aedes-broker.js';
import { externalBroker, restartAndWaitForClients } from '../broker/external.js';
import { startCloud, type Cloud, type CloudOptions } from '../cloud/cloud.js';
import { systemClock, VirtualClock, type Clock } from '../core/clock.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { startSteps, type StartStep, type Started, type StopPart } from '../core/start-steps.js';
import { cloudReads, type PlatformReads } from './reads.js';
import { guardStore, markDrainFrom } from '../store/guard.js';
import { describeLocation, inMemory, type StoreLocation } from '../store/location.js';
import { guardedStore, leasedStore, openApiState, openStore, openWebhookStore } from '../store/open.js';
import { AssetCatalogue } from '../assets/catalogue.js';
import type { PlatformConfig, PlatformLocals } from './config.js';
import { floorPartition, type IngestPartition } from './ingest-partition.js';
import { LeasedPipelines, type LeaseStatus } from './partition-leases.js';
import type { IngestPipelines, PipelineOptions } from '../cloud/pipeline.js';
import { followShardClocks, ShardClocks } from '../broker/shard-clock.js';
import { IngestGenerations } from './ingest-kills.js';
import { PlatformFaults, type PlatformFaultTimes } from './platform-faults.js';
import { RestartableStore } from './store-restarts.js';
import { startWebhooks, type PlatformWebhooks, type WebhookStores } from '../webhooks/platform-hooks.js';

export type { PlatformWebhookOptions } from '../webhooks/platform-hooks.js';
export type { LiveTruth } from '../api/live/hub.js';
export type { ServedApi } from '../api/server.js';

/**
 * The platform on its own: broker, cloud ingest, occupancy pipeline, store and HTTP API,
 * assembled from one asset catalogue, one store and one clock. A simulator (or a real hive)
 * reaches it only over MQTT; whoever owns the clock moves the platform's time with the
 * awaitable `advanceTo` (the run loop at `--speed max`), or the platform follows its own wall
 * clock (`occusim serve`). `read` is the narrow read side the run report uses.
 */
export interface Platform {
  readonly brokerUrl: string;
  readonly apiUrl: string | null;
  readonly dbPath: string;
  /** True when the platform runs in a worker thread of its own. */
  readonly inOwnThread: boolean;
  readonly reads: PlatformReads;
  /**
   * Moves a driven platform's clock to `t` (never back): what it receives from now on is
   * received at `t`. Resolves once the platform's clock reads `t`.
   */
  setTime(t: number): Promise<void>;
  /**
   * `setTime(t)`, then finalises (computes, stores, emits) every minute whose end is at least
   * the look-back before `t`; then, when given, moves the clock on to `next` (the driver's next
   * flush: it saves that flush a `setTime` round trip when the platform runs in another thread).
   */
  advanceTo(t: number, next?: number): Promise<void>;
  /** Finalises every remaining minute (end of a run). */
  finish(): Promise<void>;
  /**
   * The driver stopped before its planned end (`runEndMs`): what the platform receives from `t`
   * on is that stop's drain, which a resumed run sends again (store/guard.ts).
   */
  stoppedAt(t: number): Promise<void>;
  /**
   * The broker-restart fault: the embedded broker drops every connection and comes back on the
   * same port; resolves once these topic filters are subscribed again. Null with an external broker.
   */
  readonly restartBroker: ((waitForFilters: readonly string[]) => Promise<void>) | null;
  close(): Promise<void>;
  /**
   * Hands the simulator's truth at an instant to the live view (`/live`); absent when the
   * platform serves no API (the page then does not exist). From a platform in its own thread
   * the truth is posted to it, one-way.
   */
  readonly publishLive?: ((t: LiveTruth) => void) | undefined;
  /** Webhook subscriptions and delivery when configured and in this thread (`reads.webhookStats` answers from any thread). */
  readonly webhooks?: PlatformWebhooks | null;
  /** With `shardClocks`: every shard said done and every minute is finalised (rejects on a refused clock message or a failed round). */
  readonly shardsFinished?: Promise<void>;
  /** With partition leases: what this process owns and stands by for (/metrics, health). */
  readonly leaseStatus?: (() => LeaseStatus) | undefined;
}

/** The cloud's login on the embedded broker: a service account no scenario can name. */
export const CLOUD_USER = 'occusim-cloud';

/** What the start-up steps of a platform share: each reads what the steps before it started. */
interface PlatformParts {
  readonly config: PlatformConfig;
  readonly locals: PlatformLocals;
  readonly catalogue: AssetCatalogue;
  readonly clock: Clock;
  /** The store's location as given, or the temporary SQLite file's. */
  location: StoreLocation;
  cloudLogin: { username: string; password: string };
  broker: EmbeddedBroker;
  hooks: PlatformWebhooks | null;
  store: Store;
  /** The ingest's store connection under a run's store_restart/ingest_kill faults (absent without them). */
  restartable: RestartableStore | null;
  leased: LeasedPipelines | null;
  /** A run's store_restart and ingest_kill faults, applied as the clock reaches them. */
  faults: PlatformFaults | null;
  cloud: Cloud;
  served: { server: ApiServer; live: LiveHub } | null;
  /** The live view's hub once the API has started; what the cloud sees before has no page to go to. */
  liveHub: LiveHub | null;
  shardsFinished: Promise<void> | undefined;
}

/**
 * A platform's start-up, in order; each step starts one part and says how to stop it, and a
 * failure stops what started, last first (core/start-steps.ts). The webhook outbox starts
 * before the cloud: the pipeline's DETECTIONS/TRAFFIC stream feeds it from the first message.
 */
const PLATFORM_STEPS: readonly StartStep<PlatformParts>[] = [
  {
    name: 'temporary store',
    start: (p) => {
      if (p.config.store !== null) return;
      const dir = mkdtempSync(join(tmpdir(), 'occusim-'));
      p.location = { kind: 'sqlite', path: join(dir, 'occusim.sqlite') };
      // First in, last out: the temporary store goes once everything that writes it has closed.
      if (p.config.removeTemporaryStore) return () => rmSync(dir, { recursive: true, force: true });
    },
  },
  {
    name: 'store guard',
    start: (p) => guardStore(guardedStore(p.location), p.config.storePolicy, p.config.runKey, p.config.runEndMs),
  },
  {
    name: 'broker',
    start: async (p) => {
      const { config, locals } = p;
      // A fresh secret and client id per start: nothing in a scenario file lets a hive log in as
      // the cloud, read other hives' uplinks or push the cloud's connection off the broker.
      p.cloudLogin = config.cloudCredentials ?? {
        username: CLOUD_USER,
        password: randomBytes(24).toString('base64url'),
      };
      p.broker =
        config.brokerUrl !== null
          ? externalBroker(config.brokerUrl)
          : await startBroker({
              port: config.mqtt.port,
              ...(config.mqtt.host !== null ? { host: config.mqtt.host } : {}),
              hives: p.catalogue.all('hive').map((h) => ({ serial: h.serial, password: h.password })),
              services: [{ username: p.cloudLogin.username, password: p.cloudLogin.password, role: 'cloud' }],
              ...(locals.onPublish ? { onPublish: stampedWith(locals.onPublish, p.clock) } : {}),
            });
      return () => p.broker.close();
    },
  },
  {
    name: 'webhooks',
    start: async (p) => {
      if (!p.config.webhooks) return;
      // A platform moving its own clock (serve) waits for no delivery lane: nothing there is to be repeated.
      const hooks = await startWebhooks(await webhookStores(p.location), p.catalogue, p.clock, {
        ...p.config.webhooks,
        ...(p.config.advanceEveryMs !== null ? { followsWallClock: true } : {}),
      });
      p.hooks = hooks;
      return () => hooks.close();
    },
  },
  {
    // The cloud closes it (cloud.ts); a start that fails before the cloud leaves it to the process.
    name: 'store',
    start: async (p) => {
      const opened = await openStore(p.location);
      p.restartable = p.config.faults ? restartableStore(p.config, p.location, opened) : null;
      p.store = p.restartable?.store ?? opened;
      if (p.config.shardClocks !== null)
        await refuseFinishedShardRun(p.store, p.config.partition, describeLocation(p.location));
    },
  },
  { name: 'cloud', start: startCloudStep },
  {
    name: 'api',
    start: async (p) => {
      if (!p.config.api) return;
      const stops: Array<() => Promise<void> | void> = [];
      p.served = await startApi(p, p.config.api, stops);
      p.liveHub = p.served.live;
      return async () => {
        for (const stop of stops.splice(0).reverse()) await stop();
      };
    },
  },
  {
    name: 'own clock',
    start: (p) => {
      if (p.config.advanceEveryMs === null) return;
      const ticker = followOwnClock(p.cloud, p.clock, p.config.advanceEveryMs, p.hooks);
      return () => clearInterval(ticker);
    },
  },
  {
    name: 'shard clocks',
    start: async (p) => {
      if (p.config.shardClocks === null) return;
      const stops: Array<() => Promise<void> | void> = [];
      const { advanceTo, finish } = drive(p);
      // With leases each partition's owner marks it done (a partition taken over later is marked by its new owner).
      const following = await followShards(
        p.broker.url,
        p.config.shardClocks,
        { advanceTo, finish: p.leased ? finish : shardRunFinish(p.store, p.config.partition, finish) },
        stops,
      );
      p.shardsFinished = following.finished;
      return async () => {
        for (const stop of stops.splice(0).reverse()) await stop();
      };
    },
  },
];

/** The cloud: ingest and pipeline; a run's ingest_kill faults start a successor on the same store. */
async function startCloudStep(p: PlatformParts): Promise<StopPart> {
  const cloudOptions = cloudOptionsOf(p);
  const first = await startCloud(cloudOptions);
  const restartable = p.restartable;
  // A killed ingest's successor: a new connection to the store and to the broker, the run's tally carried on.
  const generations = restartable
    ? new IngestGenerations(first, async (tally) => {
        await restartable.reconnect();
        return startCloud({ ...cloudOptions, clientId: `${CLOUD_USER}-${randomBytes(6).toString('hex')}`, tally });
      })
    : null;
  const cloud = generations?.cloud ?? first;
  p.cloud = cloud;
  p.faults =
    restartable && generations
      ? new PlatformFaults(p.config.faults as PlatformFaultTimes, restartable, generations)
      : null;
  return () => cloud.close();
}

/** The cloud's slice of the platform: its broker login, catalogue, clock and store, and what it feeds. */
function cloudOptionsOf(p: PlatformParts): CloudOptions {
  const { config, hooks, restartable } = p;
  const pipelines = leasedPipelinesOf(p);
  return {
    brokerUrl: p.broker.url,
    username: p.cloudLogin.username,
    password: p.cloudLogin.password,
    clientId: `${CLOUD_USER}-${randomBytes(6).toString('hex')}`,
    catalogue: p.catalogue,
    tickMs: config.tickMs,
    lookbackMs: config.lookbackMs,
    clock: p.clock,
    store: p.store,
    ...(config.ownHivesOnly ? { ownHivesOnly: true } : {}),
    ...(config.shareGroup !== null ? { shareGroup: config.shareGroup } : {}),
    ...(config.partition ? { partition: floorPartition(config.partition) } : {}),
    ...(pipelines ? { pipelines } : {}),
    // Following shards: a batch's received instant is its send instant, as one process stamps it (report merge's latency).
    ...(config.shardClocks !== null ? { receivedAtSent: true } : {}),
    ...(hooks ? { sensorDeliveries: (events, receivedAtMs) => hooks.sensorDeliveries(events, receivedAtMs) } : {}),
    // Built only while a browser watches /live: a served fleet pays nothing for an unwatched page.
    ...(config.api
      ? { onSensorEvent: (e) => p.liveHub?.detections(e), sensorEventsWanted: () => p.liveHub?.watched === true }
      : {}),
    ...(restartable ? { storeAvailable: () => restartable.available } : {}),
  };
}

/** Floor partitions held by lease when several ingest processes share a PostgreSQL store; undefined otherwise. */
function leasedPipelinesOf(p: PlatformParts): CloudOptions['pipelines'] {
  const { config, store } = p;
  const shared = leasedStore(p.location);
  const partition = config.partition;
  if (!partition || config.shareGroup === null || shared === null) return undefined;
  return async (base: PipelineOptions): Promise<IngestPipelines> => {
    const leased = new LeasedPipelines({
      base,
      store,
      partition,
      leases: await shared.openLeases(),
      openFenced: (fence) => shared.openFenced(fence),
      leaseMs: config.leaseMs,
      onPartitionFinished: (label, fenced) => fenced.setState(`shards_done ${label}`, 1),
      ...(p.locals.onLeaseLog ? { log: p.locals.onLeaseLog } : {}),
    });
    p.leased = leased;
    await leased.start();
    return leased;
  };
}

/** How the platform's clock is moved on: by its driver (`advanceTo`, `finish`) or by its shards. */
function drive(p: PlatformParts): Pick<Platform, 'advanceTo' | 'finish'> {
  const { cloud, hooks, faults } = p;
  const driven = p.locals.clock === undefined ? (p.clock as VirtualClock) : null;
  return {
    advanceTo: async (t, next) => {
      moveTo(driven, t);
      if (faults) {
        await faults.reached(t);
        await faults.beforeAdvance();
      }
      await cloud.advance(t);
      // A minute finalised shows on /live now, not at the simulator's next instant.
      p.liveHub?.refresh();
      // Deliveries due at t complete before the clock moves on (determinism at --speed max).
      if (hooks) await hooks.advance();
      if (next !== undefined) {
        moveTo(driven, next);
        await faults?.reached(next);
      }
    },
    finish: async () => {
      await faults?.beforeEnd();
      await cloud.finish();
      p.liveHub?.refresh();
      if (hooks) await hooks.settle();
    },
  };
}

/** A driven clock only moves forward; a clock of its own is never moved by callers. */
function moveTo(driven: VirtualClock | null, t: number): void {
  if (driven && t > driven.now()) driven.advanceTo(t);
}

export async function startPlatform(config: PlatformConfig, locals: PlatformLocals = {}): Promise<Platform> {
  const parts = {
    config,
    locals,
    catalogue: new AssetCatalogue(config.organisations),
    clock: locals.clock ?? new VirtualClock(config.startMs),
    location: config.store,
    hooks: null,
    restartable: null,
    leased: null,
    faults: null,
    served: null,
    liveHub: null,
    shardsFinished: undefined,
  } as unknown as PlatformParts;
  return platformOver(parts, await startSteps(PLATFORM_STEPS, parts));
}

/** The started parts as the `Platform` its callers see; `close` is the steps' stop. */
function platformOver(parts: PlatformParts, started: Started): Platform {
  const { broker, cloud, hooks, store, served, leased, shardsFinished, faults } = parts;
  const driven = parts.locals.clock === undefined ? (parts.clock as VirtualClock) : null;
  const { advanceTo, finish } = drive(parts);
  return {
    ...(shardsFinished ? { shardsFinished } : {}),
    ...(leased ? { leaseStatus: leased.status.bind(leased) } : {}),
    brokerUrl: broker.url,
    apiUrl: served?.server.url ?? null,
    // As it may be printed (run summary, report): a PostgreSQL URL without its password.
    dbPath: describeLocation(parts.location),
    inOwnThread: false,
    reads: cloudReads(cloud, hooks ? () => hooks.stats() : null, faults ? () => faults.counts() : null),
    setTime: async (t) => {
      moveTo(driven, t);
      await faults?.reached(t);
    },
    advanceTo,
    stoppedAt: async (t) => {
      await faults?.beforeEnd();
      await markDrainFrom(store, t);
    },
    finish,
    webhooks: hooks,
    ...(served ? { publishLive: (t: LiveTruth) => served.live.publish(t) } : {}),
    restartBroker: broker.restart ? (filters) => restartAndWaitForClients(broker, filters) : null,
    close: () => started.stop(),
  };
}

/**
 * The ingest's store connection under a run's `store_restart`/`ingest_kill` faults
 * (store-restarts.ts). Refused where they cannot apply: a SQLite store in memory is gone once
 * closed, and several ingest processes (`serve --shards`, partition leases) are killed for
 * real, outside the schedule (test/run/distributed-faults.slow.test.ts).
 */
function restartableStore(config: PlatformConfig, location: StoreLocation, opened: Store): RestartableStore {
  const refuse = (why: string): never => {
    void opened.close();
    throw new AppError(ErrorCodes.USAGE, `store_restart and ingest_kill faults ${why}`);
  };
  if (inMemory(location))
    refuse('need a store that outlives its connection: a SQLite store in memory (:memory:) is gone once closed');
  if (config.shardClocks !== null || config.shareGroup !== null || config.partition !== null)
    refuse('apply to a run’s own ingest, not to ingest processes serving shards (kill those processes instead)');
  return new RestartableStore(opened, () => openStore(location));
}

/**
 * The HTTP API over the platform's store and catalogue: its own connection to the store,
 * through the asynchronous `Store` port (WAL lets it read a SQLite file while ingest writes;
 * on PostgreSQL its reads queue on a connection of their own, never behind the pipeline's
 * writes, and never block the event loop), the API's state (clients, mutations) in the same store.
 */
async function startApi(
  p: PlatformParts,
  api: ServedApi,
  closers: Array<() => Promise<void> | void>,
): Promise<{ server: ApiServer; live: LiveHub }> {
  const { catalogue, cloud, hooks } = p;
  const leased = p.leased;
  const leases = leased ? () => leased.status() : null;
  const store: Store = await openStore(p.location);
  closers.push(() => store.close());
  const state = await openApiState(p.location);
  closers.push(() => state.close());
  const series = storeSeries(store, catalogue);
  // The live view's sends are paced on the wall clock: it faces a browser.
  const live = new LiveHub({
    assets: catalogue,
    status: store,
    now: () => systemClock.now(),
    measured: {
      presence: async (id) => (await store.presenceMinutes(id)).at(-1) ?? null,
      traffic: async (id) =>
        (await store.trafficMinutes(id)).reduce((a, m) => ({ in: a.in + m.in, out: a.out + m.out }), { in: 0, out: 0 }),
      counters: () => cloud.counters(),
    },
  });
  closers.push(() => live.close());
  const server = await startApiServer({
    catalogue,
    port: api.port,
    ...(api.host !== undefined ? { host: api.host } : {}),
    audience: api.audience,
    ...(api.graphiql !== undefined ? { graphiql: api.graphiql } : {}),
    ...(api.metricsToken !== undefined ? { metricsToken: api.metricsToken } : {}),
    ...(api.allowedHosts !== undefined ? { allowedHosts: api.allowedHosts } : {}),
    series,
    state,
    status: store,
    extensions: [mcpApiExtension],
    ...(hooks ? { webhooks: hooks.service } : {}),
    live,
    // Read at scrape time from the same tallies the run report reads: /metrics agrees with it.
    metrics: {
      counters: () => cloud.counters(),
      latenciesMs: () => cloud.latenciesMs(),
      webhookStats: () => (hooks ? hooks.stats() : Promise.resolve(null)),
      status: store,
      ...(leases ? { leases } : {}),
    },
  });
  closers.push(() => server.close());
  return { server, live };
}

/** A platform on the wall clock turns what it ingests into occupancy minute by minute on its own. */
function followOwnClock(cloud: Cloud, clock: Clock, everyMs: number, hooks: PlatformWebhooks | null): NodeJS.Timeout {
  let busy = false;
  const timer = setInterval(() => {
    // One round at a time: a slow store must not pile rounds up behind each other.
    if (busy) return;
    busy = true;
    cloud
      .advance(clock.now())
      // Calls are serialised by the engine; a failed round is retried at the next tick.
      .then(() => (hooks ? hooks.advance() : undefined))
      .catch(() => {
        // A failed ingest is kept by the cloud and raised to whoever asks next (close, a run);
        // the timer must not take the process down meanwhile.
      })
      .finally(() => {
        busy = false;
      });
  }, everyMs);
  timer.unref();
  return timer;
}

/**
 * Webhook subscriptions, delivery outbox and event outbox, on connections of their own,
 * behind the asynchronous ports (the engine awaits them: a PostgreSQL query never blocks the
 * platform's thread, and never queues behind the pipeline's writes on its connection).
 */
async function webhookStores(location: StoreLocation): Promise<WebhookStores> {
  const webhooks = await openWebhookStore(location);
  try {
    return { webhooks, events: await openStore(location) };
  } catch (err) {
    await webhooks.close();
    throw err;
  }
}

/**
 * A platform driven by simulator shards elsewhere (broker/shard-clock.ts): each time the
 * slowest shard moves on, the clock moves there and the minutes behind the look-back are
 * finalised; once every shard said done, every minute is. Rounds run one after another.
 */
async function followShards(
  brokerUrl: string,
  count: number,
  driven: Pick<Platform, 'advanceTo' | 'finish'>,
  closers: Array<() => Promise<void> | void>,
): Promise<{ finished: Promise<void> }> {
  const clocks = new ShardClocks(count);
  let chain: Promise<void> = Promise.resolve();
  let reached = -Infinity;
  let finishing = false;
  let settle: { resolve: () => void; reject: (err: unknown) => void } | null = null;
  const finished = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited by the caller; a failure before then must not surface as unhandled.
  finished.catch(() => undefined);
  const fail = (err: unknown): void => settle?.reject(err);
  const follower = await followShardClocks(
    brokerUrl,
    `occusim-ingest-clock-${randomBytes(6).toString('hex')}`,
    (m) => {
      try {
        clocks.note(m);
      } catch (err) {
        fail(err);
        return;
      }
      const min = clocks.min();
      if (min !== null && min > reached) {
        reached = min;
        chain = chain.then(() => driven.advanceTo(min));
      }
      if (clocks.allDone() && !finishing) {
        finishing = true;
        chain = chain.then(() => driven.finish());
        chain.then(() => settle?.resolve(), fail);
      }
      chain = chain.catch((err: unknown) => fail(err));
    },
    (why) => fail(new AppError(ErrorCodes.USAGE, `shard clock message refused: ${why}`)),
  );
  closers.push(() => follower.close());
  return { finished };
}

/** State key set by an ingest process that followed its shards to the end (one per partition). */
const shardsDoneKey = (p: IngestPartition | null): string => `shards_done${p ? ` ${p.index}/${p.count}` : ''}`;

/**
 * `serve --shards n` on a store whose sharded run this partition already finished: new shards
 * would re-send every batch from the start, and those of a longer run than the first differ from
 * the stored ones at its end (its drain), which the ingest side cannot tell apart from
 * duplicates. Refused, not diverging silently (docs/scale-out.md, Resuming). A process that
 * stopped before the end (a crash) starts again and reloads its open minutes.
 */
async function refuseFinishedShardRun(store: Store, partition: IngestPartition | null, name: string): Promise<void> {
  if ((await store.getState(shardsDoneKey(partition))) === undefined) return;
  await store.close();
  throw new AppError(
    ErrorCodes.USAGE,
    `store ${name} holds a sharded run this ingest process${partition ? ` (partition ${partition.index}/${partition.count})` : ''} already finished: resuming runs of --external-ingest shards is not supported; serve it without --shards, or ingest a new run into a new database`,
  );
}

/** The ingest side's end of a sharded run, then its mark in the store. */
function shardRunFinish(
  store: Store,
  partition: IngestPartition | null,
  finish: () => Promise<void>,
): () => Promise<void> {
  return async () => {
    await finish();
    await store.setState(shardsDoneKey(partition), 1);
  };
}

/** A broker's publish callback that also passes the platform's time of acceptance. */
function stampedWith(
  onPublish: (topic: string, payload: Buffer, atMs: number) => void,
  clock: Clock,
): (topic: string, payload: Buffer) => void {
  return (topic, payload) => onPublish(topic, payload, clock.now());
}
