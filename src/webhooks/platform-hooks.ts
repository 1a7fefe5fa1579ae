import { performance } from 'node:perf_hooks';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { EventMetadata, type SensorEvent } from '../cloud/events.js';
import type { Store } from '../store/port.js';
import type { AsyncWebhookStore, DeliveryInsert } from '../store/webhook-port.js';
import { systemWallTime, type Clock, type WallTime } from '../core/clock.js';
import { rngFor } from '../core/rng.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { startSteps, type StartStep, type StopPart } from '../core/start-steps.js';
import { AddressPolicy } from './address-policy.js';
import { isWebhookError } from './errors.js';
import { WebhookEngine, type EngineStats, type SubscriptionStats } from './engine.js';
import { expectedState } from './expected-state.js';
import type { StateRow } from './consumer-state.js';
import { FaultInjector } from './fault-injector.js';
import type { FaultCounts, WebhookFaults } from './faults.js';
import { EventStorms } from './event-storm.js';
import { AnswerTimes } from './answer-times.js';
import { stormProblem, type StormCounts, type WebhookStorm } from './storm.js';
import type { RetryPolicy } from './retry.js';
import { Sender } from './sender.js';
import { WebhookService, type Created } from './service.js';
import { secretFromKey } from './signing.js';
import type { CreateInput } from './subscription.js';
import { DEFAULT_WEBHOOK_CONCURRENCY, concurrencyProblem } from './concurrency.js';
import {
  DEFAULT_WEBHOOK_TIMESTAMPS,
  WEBHOOK_TIMESTAMPS,
  webhookTimestampsOf,
  type WebhookTimestamps,
} from './timestamps.js';

/**
 * Webhooks as the platform runs them: subscriptions and the delivery outbox in the platform's
 * store (connections of their own, opened by the platform: SQLite or PostgreSQL), the engine
 * fed by the event outbox and the pipeline's DETECTIONS/TRAFFIC deliveries, delivering on the
 * platform's clock. Both stores are awaited through their asynchronous ports.
 */
export interface WebhookStores {
  /** Subscriptions and the delivery outbox. */
  webhooks: AsyncWebhookStore;
  /** The occupancy event outbox the fan-out reads. */
  events: Pick<Store, 'events' | 'close'>;
}

export interface PlatformWebhookOptions {
  /** Seeds the retry jitter (and derived secrets of declared webhooks). */
  seed: number | string;
  /** CIDR blocks webhooks may reach although private or loopback (`--webhook-allow`). */
  allow?: readonly string[];
  /**
   * Subscriptions declared by the scenario, created at the first start (kept by the store after),
   * each with its own concurrency limit when the file gives one.
   */
  declared?: ReadonlyArray<{
    orgId: string;
    input: CreateInput;
    /** Where it was declared (a scenario file's location). */ src?: string;
    concurrency?: number;
    /** Delivery faults on purpose (webhooks/faults.ts). */ faults?: WebhookFaults;
    /** Storm mode: events at a rate, independent of the people (webhooks/storm.ts). */ storm?: WebhookStorm;
  }>;
  /** Faults of every subscription without its own (`--webhook-faults`; webhooks/faults.ts). */
  faults?: WebhookFaults;
  /** Storm of every subscription without its own (`--webhook-storm`; webhooks/storm.ts). */
  storm?: WebhookStorm;
  /**
   * `webhook_down` faults of the run's schedule: the endpoint of the named webhook (every
   * webhook's when null) refuses connections over [fromMs, toMs) of the platform's clock.
   */
  down?: ReadonlyArray<{ fromMs: number; toMs: number; webhook: string | null; src: string }>;
  /** `stats()` also gives each subscription's expected consumer state (`run --consumer-expect`; webhooks/expected-state.ts). */
  consumerExpect?: boolean;
  /** Requests in flight per subscription unless its declaration says otherwise (`--webhook-concurrency`, default 16; webhooks/concurrency.ts). */
  concurrency?: number;
  retry?: RetryPolicy;
  disableAfterMs?: number;
  /** Wall time: perf figures, and `webhook-timestamp` unless `timestamps` is 'simulated' (default: the system's). */
  wallTime?: WallTime;
  /** What `webhook-timestamp` carries (`--webhook-timestamps`, default 'wall'; webhooks/timestamps.ts). */
  timestamps?: WebhookTimestamps;
  /** How far past a run's end waiting retries are still delivered (simulated ms, default 2 days). */
  settleMs?: number;
  /** Wall ms the end of a run waits for lanes over their budget (default 5 s; engine.ts `drainMs`). */
  drainMs?: number;
  /**
   * The platform moves its own clock (`serve`): nothing is to be repeated, so an advance waits
   * for no lane and every lane delivers at its own pace (engine.ts `awaitLanes`).
   */
  followsWallClock?: boolean;
}

const DEFAULT_SETTLE_MS = 2 * 86_400_000;
/** Wall ms a close waits for the lanes' last records once their connections are gone. */
const CLOSE_GRACE_MS = 5_000;

export interface PlatformWebhooks {
  readonly service: WebhookService;
  readonly engine: WebhookEngine;
  /** Deliveries of a message's DETECTIONS/TRAFFIC events, for the pipeline to enqueue in the batch's transaction. */
  sensorDeliveries(events: readonly SensorEvent[], receivedAtMs: number): DeliveryInsert[];
  /** Fan-out and delivery of everything due now. */
  advance(): Promise<void>;
  /** End of a run: waiting retries delivered at their simulated instants, up to `settleMs` (default 2 days) past the end. */
  settle(): Promise<void>;
  stats(): Promise<WebhookStats>;
  close(): Promise<void>;
}

/** The engine's figures, with the faults applied per subscription and (`consumerExpect`) the expected consumer state. */
export interface WebhookStats extends EngineStats {
  subscriptions: Array<SubscriptionStats & { faults?: FaultCounts; storm?: StormCounts }>;
  /** Rows of every subscription, each naming its subscription. */
  consumer?: StateRow[];
}

/** The declared webhooks' concurrency limits, faults and storms, by subscription id. */
type Declared = Awaited<ReturnType<typeof declare>>;

/** What the webhook start-up steps share: each reads what the steps before it set. */
interface HookParts {
  readonly stores: WebhookStores;
  readonly catalogue: AssetCatalogue;
  readonly clock: Clock;
  readonly o: PlatformWebhookOptions;
  policy: AddressPolicy;
  service: WebhookService;
  concurrency: number;
  declared: Declared;
  metadata: EventMetadata;
  storms: EventStorms | null;
  answerTimes: AnswerTimes;
  injector: FaultInjector | null;
  sender: Sender;
  engine: WebhookEngine;
}

/**
 * Webhook delivery's start-up, in order (core/start-steps.ts); a failure stops what started,
 * last first. The stores come first and close last: the platform opened them, this part owns
 * them from the start on.
 */
const WEBHOOK_STEPS: readonly StartStep<HookParts>[] = [
  {
    name: 'stores',
    start:
      ({ stores }) =>
      async () => {
        try {
          await stores.webhooks.close();
        } finally {
          await stores.events.close();
        }
      },
  },
  {
    name: 'address policy',
    start: (p) => {
      p.policy = addressPolicy(p.o.allow ?? []);
    },
  },
  {
    name: 'subscriptions',
    start: async (p) => {
      // Declared webhooks without a secret get one derived from the seed: the same run signs the same way.
      const secrets = rngFor(p.o.seed, 'webhook-secrets');
      p.service = await WebhookService.open(p.stores.webhooks, p.policy, () =>
        secretFromKey(Uint8Array.from({ length: 32 }, () => secrets.int(0, 255))),
      );
    },
  },
  {
    name: 'options',
    start: (p) => {
      p.concurrency = checkedConcurrency(p.o);
    },
  },
  {
    name: 'declared webhooks',
    start: async (p) => {
      p.declared = await declare(p.service, p.stores.webhooks, p.clock, p.o.declared ?? []);
      p.metadata = new EventMetadata(p.catalogue);
    },
  },
  {
    name: 'storms',
    start: (p) => {
      p.storms = startStorms(p);
    },
  },
  { name: 'sender', start: startSender },
  { name: 'engine', start: startEngine },
];

/**
 * Starts webhook delivery over `stores` (the platform opened them; closed by `close`, or here
 * when the start fails): subscriptions loaded, the declared ones created or brought up to date.
 */
export async function startWebhooks(
  stores: WebhookStores,
  catalogue: AssetCatalogue,
  clock: Clock,
  o: PlatformWebhookOptions,
): Promise<PlatformWebhooks> {
  const p = { stores, catalogue, clock, o, storms: null, injector: null } as unknown as HookParts;
  const started = await startSteps(WEBHOOK_STEPS, p);
  const { service, engine, storms, injector } = p;
  return {
    service,
    engine,
    sensorDeliveries: (events, receivedAtMs) => engine.sensorDeliveries(events, receivedAtMs),
    advance: () => engine.advance(),
    settle: () => engine.settle(clock.now() + (o.settleMs ?? DEFAULT_SETTLE_MS)),
    async stats() {
      const e = await engine.stats();
      const subscriptions = e.subscriptions.map((s) => {
        const c = injector?.counts(s.id) ?? null;
        const storm = storms?.counts(s.id) ?? null;
        return { ...s, ...(c ? { faults: c } : {}), ...(storm ? { storm } : {}) };
      });
      return {
        ...e,
        subscriptions,
        ...(o.consumerExpect === true ? { consumer: await expectedState(stores.webhooks, service.all()) } : {}),
      };
    },
    close: () => started.stop(),
  };
}

function addressPolicy(allow: readonly string[]): AddressPolicy {
  try {
    return new AddressPolicy(allow);
  } catch (err) {
    throw isWebhookError(err) ? new AppError(ErrorCodes.USAGE, err.message, { cause: err }) : err;
  }
}

/** The options checked once the subscriptions are loaded; returns the default concurrency. */
function checkedConcurrency(o: PlatformWebhookOptions): number {
  const concurrency = o.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY;
  const problem = concurrencyProblem(concurrency);
  if (problem !== null) throw new AppError(ErrorCodes.USAGE, `webhook concurrency: ${problem}`);
  if (o.timestamps !== undefined && webhookTimestampsOf(o.timestamps) === null)
    throw new AppError(
      ErrorCodes.USAGE,
      `webhook timestamps must be ${WEBHOOK_TIMESTAMPS.join(' or ')}, got ${JSON.stringify(o.timestamps)}`,
    );
  const flagStorm = o.storm === undefined ? null : stormProblem(o.storm);
  if (flagStorm !== null) throw new AppError(ErrorCodes.USAGE, `webhook storm: ${flagStorm}`);
  return concurrency;
}

/** Storm mode when a webhook declares one or `--webhook-storm` gives one; null otherwise. */
function startStorms(p: HookParts): EventStorms | null {
  const { o, service, clock } = p;
  const declaredStorms = p.declared.storms;
  if (declaredStorms.size === 0 && o.storm === undefined) return null;
  const storms = new EventStorms({
    seed: o.seed,
    catalogue: p.catalogue,
    metadata: p.metadata,
    stormOf: (s) => declaredStorms.get(s.id)?.storm ?? o.storm ?? null,
  });
  // A declared storm must have something to be about: refused at start, at its place in the file.
  for (const [id, { storm, path }] of declaredStorms) {
    const s = service.all().find((x) => x.id === id);
    const none = s ? storms.subjectless(s, storm) : [];
    if (none.length > 0)
      throw new AppError(
        ErrorCodes.SCENARIO_INVALID,
        `${path}.storm.types: the organisation has nothing ${s?.filters && Object.keys(s.filters).length > 0 ? 'the filters let through ' : ''}to send ${none.join(', ')} about`,
      );
  }
  storms.begin(service.all(), clock.now());
  return storms;
}

/** The sender, through the fault injector when a webhook has faults or a `webhook_down` applies. */
function startSender(p: HookParts): void {
  const { o, service } = p;
  const { limits, faults } = p.declared;
  // Perf only: how long endpoints take to answer, what limits delivery (run/delivery-limit.ts).
  p.answerTimes = new AnswerTimes(o.wallTime ?? systemWallTime);
  const senderOptions = {
    policy: p.policy,
    concurrency: p.concurrency,
    concurrencyOf: (id: string) => limits.get(id),
    answerTimes: p.answerTimes,
  };
  const down = o.down ?? [];
  for (const d of down)
    if (d.webhook !== null && !service.all().some((s) => s.name === d.webhook))
      throw new AppError(
        ErrorCodes.SCENARIO_INVALID,
        `fault webhook_down${d.src ? ` (${d.src})` : ''}: no webhook named ${JSON.stringify(d.webhook)} (the run's webhooks: ${
          service
            .all()
            .map((s) => JSON.stringify(s.name))
            .join(', ') || 'none'
        })`,
      );
  p.injector =
    faults.size > 0 || o.faults !== undefined || down.length > 0
      ? new FaultInjector({
          ...senderOptions,
          seed: o.seed,
          faultsOf: (s) => faults.get(s.id) ?? o.faults ?? null,
          downAt: (s, t) =>
            down.some((d) => t >= d.fromMs && t < d.toMs && (d.webhook === null || d.webhook === s.name)),
        })
      : null;
  p.sender = p.injector ?? new Sender(senderOptions);
}

/** The engine over the outbox; its stop ends the sender it was given too. */
async function startEngine(p: HookParts): Promise<StopPart> {
  const { o, storms, sender } = p;
  const wallTime = o.wallTime ?? systemWallTime;
  const engine = await WebhookEngine.open({
    service: p.service,
    store: p.stores.webhooks,
    outbox: (after) => p.stores.events.events(after),
    metadata: p.metadata,
    ...(storms ? { storms } : {}),
    // The delivering thread's event-loop busy share (perf: what limits delivery).
    loopActiveMs: () => performance.eventLoopUtilization().active,
    answerTimes: p.answerTimes,
    inFlight: p.concurrency,
    clock: p.clock,
    seed: o.seed,
    sender,
    ...(o.retry ? { retry: o.retry } : {}),
    ...(o.disableAfterMs !== undefined ? { disableAfterMs: o.disableAfterMs } : {}),
    ...(o.drainMs !== undefined ? { drainMs: o.drainMs } : {}),
    ...(o.followsWallClock === true ? { awaitLanes: false } : {}),
    // Wall time for the enqueue → 2xx latency of perf only; results never read it.
    wallTime,
    // Standard verifiers check webhook-timestamp against their own clock (5 minutes' tolerance).
    ...((o.timestamps ?? DEFAULT_WEBHOOK_TIMESTAMPS) === 'wall' ? { timestampClock: wallTime } : {}),
  });
  p.engine = engine;
  return async () => {
    // What the outbox holds is enqueued (durable); nothing more is sent: a run's summary has
    // counted what is pending, and it stays so for the next platform on the store.
    await engine.fanOut().catch(() => undefined);
    // Lanes still sending (an endpoint that does not answer) stop with the connections: the
    // attempts in flight end as failures, recorded before the store closes.
    engine.stop();
    await sender.close();
    await engine.closed(CLOSE_GRACE_MS);
  };
}

/**
 * Creates the declared subscriptions an earlier start has not already created (matched by
 * organisation and name), and brings the ones it did create up to date with the file (a
 * resumed run whose file changed, e.g. a receiver on a new port): same id and outbox, the
 * file's URL, auth, types, filters and secret; a changed endpoint re-enabled, its waiting
 * retries due now. A refused one is a scenario error at its place in the file. Returns the
 * concurrency limits and the faults the file gives, by subscription id.
 */
async function declare(
  service: WebhookService,
  store: AsyncWebhookStore,
  clock: Clock,
  declared: NonNullable<PlatformWebhookOptions['declared']>,
): Promise<{
  limits: Map<string, number>;
  faults: Map<string, WebhookFaults>;
  storms: Map<string, { storm: WebhookStorm; path: string }>;
}> {
  const limits = new Map<string, number>();
  const faults = new Map<string, WebhookFaults>();
  const storms = new Map<string, { storm: WebhookStorm; path: string }>();
  for (const [i, { orgId, input, src, concurrency, faults: f, storm }] of declared.entries()) {
    const path = src ?? `webhooks[${i}]`;
    const problem = concurrency === undefined ? null : concurrencyProblem(concurrency);
    if (problem !== null) throw new AppError(ErrorCodes.SCENARIO_INVALID, `${path}.concurrency: ${problem}`);
    const stormWhy = storm === undefined ? null : stormProblem(storm);
    if (stormWhy !== null) throw new AppError(ErrorCodes.SCENARIO_INVALID, `${path}.storm.${stormWhy}`);
    try {
      const existing = service.list(orgId).find((s) => s.name === input.name);
      let id: string;
      if (!existing) {
        id = ((await service.create(orgId, [input], () => path))[0] as Created).subscription.id;
      } else {
        if ((await service.redeclare(existing.id, input, path)).endpointChanged)
          await store.reschedule(existing.id, clock.now());
        id = existing.id;
      }
      if (concurrency !== undefined) limits.set(id, concurrency);
      if (f !== undefined) faults.set(id, f);
      if (storm !== undefined) storms.set(id, { storm, path });
    } catch (err) {
      if (isWebhookError(err))
        throw new AppError(ErrorCodes.SCENARIO_INVALID, `${err.message} (${err.code})`, { cause: err });
      throw err;
    }
  }
  return { limits, faults, storms };
}
