import type { EventMetadata, SensorEvent } from '../cloud/events.js';
import type { StoredEvent } from '../store/port.js';
import type { AsyncWebhookStore, AttemptRecord, Delivery, DeliveryInsert, LastValue } from '../store/webhook-port.js';
import { systemWallTime, type Clock, type WallTime } from '../core/clock.js';
import { rngFor, type Rng } from '../core/rng.js';
import { percentile } from '../core/stats.js';
import { ValueCounts } from '../core/value-counts.js';
import { HOUR_MS } from '../core/time.js';
import { RETENTION_MS } from '../cloud/rollup.js';
import { FanOut } from './fan-out.js';
import { DEFAULT_RETRY, nextDelayMs, type Outcome, type RetryPolicy } from './retry.js';
import type { Sender } from './sender.js';
import type { WebhookService } from './service.js';
import { signatureHeader } from './signing.js';
import type { Subscription } from './subscription.js';
import type { WebhookTimestamps } from './timestamps.js';
import { DEFAULT_LANE_BUDGET_MS, Lanes, type PassControl } from './lanes.js';
import type { EventStorms } from './event-storm.js';
import type { AnswerTimes } from './answer-times.js';

/**
 * The delivery engine, on the platform's clock. `advance(now)`:
 * 1. fan-out: occupancy events of the store's outbox after the durable cursor become one
 *    delivery per matching subscription, enqueued with the cursor's move in one transaction;
 *    DETECTIONS and TRAFFIC deliveries are built for the pipeline (`sensorDeliveries`), which
 *    enqueues them in the transaction that stores the batch carrying them;
 * 2. delivery: every lane (one subscription on its own connection, lanes.ts) is asked for a
 *    pass up to `now` and runs it concurrently with the others: the subscription's due
 *    deliveries in the store's order (due instant, event timestamp, event id), signed with the
 *    wall clock at the attempt as `webhook-timestamp`
 *    (`timestampClock`; without it the platform time); outcomes are written in one transaction
 *    per round; failures wait (jittered backoff from the subscription's seeded stream) on the
 *    platform clock.
 * `advance` resolves when every lane within its time budget has nothing due at `now` any more,
 * so at `--speed max` the deliveries of a minute are complete before the run moves on, and a
 * simulated day of outage is a few thousand rounds, not a day. A lane over its budget goes on
 * on its own (lanes.ts), and on a wall-clock platform (`awaitLanes: false`, `serve`) no lane is
 * waited for at all.
 *
 * The stores are awaited (`AsyncWebhookStore` and the `Store` port's `events`): one call per
 * round or fan-out chunk, never per delivery, so a PostgreSQL query waits on the event loop
 * instead of blocking the platform's thread, and on SQLite (answers already settled) an await
 * costs a microtask. Fan-outs, advances and the end of a run run one after another on one
 * chain, each reading the clock once (at its start), and each lane's rounds run strictly in
 * turn: the calls the store sees for a lane, and so the requests each endpoint receives, are
 * the same whatever the store's latency.
 */
export interface EngineOptions {
  service: WebhookService;
  store: AsyncWebhookStore;
  /** The occupancy event outbox (`Store.events`). */
  outbox: (afterId: number) => Promise<StoredEvent[]>;
  metadata: EventMetadata;
  clock: Clock;
  seed: number | string;
  sender: Sender;
  retry?: RetryPolicy;
  /** An endpoint failing for this long (platform time) is disabled; its outbox waits for updateWebhooks. Default 12 h. */
  disableAfterMs?: number;
  /** Deliveries per subscription per round (default 256). */
  batch?: number;
  /** Occupancy events per fan-out transaction (default 4096). */
  fanOutEvents?: number;
  /** Wall time for the enqueue → 2xx latency (perf only, never in results). */
  wallTime?: WallTime;
  /**
   * What `webhook-timestamp` carries, read at each attempt (webhooks/timestamps.ts): the wall
   * clock, so standard verifiers accept it. Absent: the attempt's platform instant (simulated
   * time at `--speed max`), which makes every request byte-identical across runs.
   */
  timestampClock?: WallTime;
  /** Wall ms an advance waits for a lane's pass before it goes on on its own (webhooks/lanes.ts; default 2 s). */
  laneBudgetMs?: number;
  /** Whether `advance` waits for the lanes (within their budgets): what makes `--speed max` deterministic. Default true; false on a wall-clock platform (`serve`). */
  awaitLanes?: boolean;
  /** Wall ms the end of a run waits for lanes still running on their own (default 5 s): what they have not delivered then stays pending, in the store. */
  drainMs?: number;
  /** Storm mode's events (webhooks/event-storm.ts), enqueued at each fan-out up to its instant. */
  storms?: EventStorms;
  /** The thread's cumulative event-loop active ms (perf only: what limits delivery, run/delivery-limit.ts). */
  loopActiveMs?: () => number;
  /** The endpoints' answer times, as the sender measures them (perf only). */
  answerTimes?: AnswerTimes;
  /** Requests in flight per subscription (perf only: what the answer times can carry). */
  inFlight?: number;
}

export interface SubscriptionStats {
  id: string;
  name: string;
  delivered: number;
  retried: number;
  deadLettered: number;
  /** Times the engine disabled it after failing too long. */
  disabled: number;
  pending: number;
}

/** Wall-time figures of one subscription's endpoint (perf only: they vary run to run). */
export interface EndpointPerf {
  id: string;
  name: string;
  /** Enqueue → 2xx, wall ms, of the deliveries this process enqueued and delivered. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Deliveries per wall second, from its first attempt to its last 2xx (0 before two). */
  deliveredPerWallS: number;
}

export interface EngineStats {
  subscriptions: SubscriptionStats[];
  /** Per endpoint (subscription), in creation order. */
  endpoints: EndpointPerf[];
  /** Wall ms from enqueue to the 2xx, of deliveries enqueued by this process. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Whether delivery keeps up with what the platform produces (webhooks/keep-up.ts reads it). */
  keepUp: EngineKeepUp;
  /** What `webhook-timestamp` carried (webhooks/timestamps.ts). */
  timestamps: WebhookTimestamps;
}

export interface EngineKeepUp {
  /** Deliveries enqueued by this process (one per subscription and event). */
  enqueued: number;
  /** Wall ms during which at least one lane was delivering: the capacity is delivered / this. */
  busyWallMs: number;
  /** Platform (simulated) ms from the sensing instant to the 2xx, at delivery: p50 / p99 / max. */
  sensingToDeliveredSimMs: { p50: number; p99: number; max: number };
  /** Where the delivery time went (run/delivery-limit.ts reads it). */
  load: DeliveryLoad;
}

/** Measured while delivering: the inputs of the "what limits delivery" statement. */
export interface DeliveryLoad {
  /** Event-loop active ms of the delivering thread within the busy wall ms (null: not measured). */
  loopActiveMs: number | null;
  /** Wall ms in the store's calls of the delivery path (due, record, storm/occupancy enqueue). */
  storeMs: number;
  /** Answers (status lines) received, and their wall ms from the request's write to its answer, p50 / p99 (webhooks/answer-times.ts). */
  answered: number;
  responseP50Ms: number;
  responseP99Ms: number;
  /** Requests in flight per subscription (the platform's default pipelining depth). */
  inFlight: number;
}

/** The deliveries of one round of a subscription, sent, their outcomes on their way. */
interface Round {
  s: Subscription;
  due: Delivery[];
  outcomes: Promise<Outcome[]>;
}

/** 12 h: shorter than the 13.2 h a delivery is retried at least, so a dead endpoint is disabled before any of its events dies. */
export const DEFAULT_DISABLE_AFTER_MS = 12 * 3_600_000;
const CURSOR = 'webhook_outbox_after';
/** Wall ms `settle` waits for lanes running on their own: an endpoint that does not answer, or a slow one's backlog, must not hold the end of a run. */
export const DEFAULT_DRAIN_MS = 5_000;
/** Occupancy events per fan-out transaction (smaller ones rewrite the same index pages commit after commit: 512 cost ×1.5 the CPU per row). */
const FAN_OUT_EVENTS = 4096;

export class WebhookEngine {
  readonly #o: EngineOptions;
  readonly #fanOut = new FanOut();
  readonly #rngs = new Map<string, Rng>();
  readonly #counts = new Map<string, { delivered: number; retried: number; deadLettered: number; disabled: number }>();
  /** Wall instant of enqueue per subscription and event id (perf only). */
  readonly #enqueuedWall = new Map<string, Map<string, number>>();
  /** Enqueue → 2xx wall ms, per subscription. */
  readonly #latencies = new Map<string, number[]>();
  /** Per subscription: wall instants of its first attempt and of its last 2xx (throughput). */
  readonly #span = new Map<string, { first: number; last: number }>();
  #storeMs = 0;
  /** Simulated ms from sensing to 2xx: value counts, memory bounded by distinct values. */
  readonly #sensingAge = new ValueCounts();
  #enqueued = 0;
  #lastPrune = -Infinity;
  #running: Promise<void> = Promise.resolve();
  readonly #lanes: Lanes;
  /** Subscriptions a lane's pass is draining (a subscription whose URL changed is drained by one lane at a time). */
  readonly #draining = new Set<string>();
  #closing = false;

  /** The engine over `o.store`, with what `send_on_value_change` sent before a restart. */
  static async open(o: EngineOptions): Promise<WebhookEngine> {
    return new WebhookEngine(o, await o.store.lastValues());
  }

  private constructor(o: EngineOptions, lastValues: readonly LastValue[]) {
    this.#o = o;
    // Lanes are timed on the wall clock whatever the platform's clock: their budgets are about endpoints.
    this.#lanes = new Lanes(
      o.laneBudgetMs ?? DEFAULT_LANE_BUDGET_MS,
      o.wallTime ?? systemWallTime,
      o.loopActiveMs ?? null,
    );
    // What send_on_value_change sent before a restart: an unchanged value is not sent again.
    this.#fanOut.gate.load(lastValues);
    // Re-enabled by updateWebhooks: the user says the receiver is back, so its waiting deliveries
    // go now (written before the update resolves: the service awaits its listeners).
    const statuses = new Map(o.service.all().map((s) => [s.id, s.status] as const));
    o.service.onChange(async () => {
      const live = new Set<string>();
      const reenabled: string[] = [];
      for (const s of o.service.all()) {
        live.add(s.id);
        if (statuses.get(s.id) === 'DISABLED' && s.status === 'ENABLED') reenabled.push(s.id);
        statuses.set(s.id, s.status);
      }
      // A deleted subscription's values went with it in the store.
      for (const id of [...statuses.keys()].filter((x) => !live.has(x))) {
        statuses.delete(id);
        this.#fanOut.gate.forget(id);
      }
      for (const id of reenabled) await o.store.reschedule(id, o.clock.now());
    });
  }

  /**
   * The deliveries of one message's DETECTIONS/TRAFFIC events (packet order), for the pipeline
   * to enqueue in the transaction that stores the batch (`BatchWrite.deliveries`), due at its receipt.
   */
  sensorDeliveries(events: readonly SensorEvent[], receivedAtMs: number): DeliveryInsert[] {
    const subs = this.#o.service.all();
    const out: DeliveryInsert[] = [];
    // On the ingest path: nothing is built unless a subscription takes the type.
    const wanted = new Set(subs.flatMap((s) => s.eventTypes as readonly string[]));
    if (!wanted.has('DETECTIONS') && !wanted.has('TRAFFIC')) return out;
    for (const e of events)
      if (wanted.has(e.type)) this.#fanOut.deliveries(subs, this.#o.metadata.sensorEnvelope(e), 0, receivedAtMs, out);
    this.#noteEnqueued(out);
    return out;
  }

  /** Occupancy events of the outbox after the cursor → deliveries, cursor moved in the same transaction (on the engine's chain). */
  fanOut(): Promise<void> {
    return this.#serial(() => this.#fanOutAt(this.#o.clock.now()));
  }

  async #fanOutAt(nowMs: number): Promise<void> {
    await this.#fanOutEvents(nowMs);
    await this.#fanOutStorms(nowMs);
  }

  /** Storm events due by `nowMs`, `fanOutEvents` per transaction, in the subscriptions' outboxes like any other. */
  async #fanOutStorms(nowMs: number): Promise<void> {
    const storms = this.#o.storms;
    if (!storms) return;
    const subs = this.#o.service.all();
    for (;;) {
      const out = storms.take(subs, nowMs, this.#o.fanOutEvents ?? FAN_OUT_EVENTS);
      if (out.length === 0) return;
      this.#noteEnqueued(out);
      await this.#timed(() => this.#o.store.enqueue(out));
    }
  }

  async #fanOutEvents(nowMs: number): Promise<void> {
    const { store, service, metadata } = this.#o;
    const after = await store.cursor(CURSOR);
    const events = await this.#o.outbox(after);
    if (events.length === 0) {
      // Values admitted on the ingest path (DETECTIONS, TRAFFIC) since the last enqueue.
      const changed = this.#fanOut.gate.takeChanged();
      if (changed.length > 0) await store.enqueue([], undefined, changed);
      return;
    }
    const subs = service.all();
    // Bounded transactions: a backlog of events is enqueued `fanOutEvents` at a time, each
    // chunk with its cursor move (exactly once still), so the memory of one transaction is
    // bounded instead of the whole backlog's bodies being held until one large commit.
    const step = this.#o.fanOutEvents ?? FAN_OUT_EVENTS;
    for (let i = 0; i < events.length; i += step) {
      const chunk = events.slice(i, i + step);
      const out: DeliveryInsert[] = [];
      for (const e of chunk) this.#fanOut.deliveries(subs, metadata.envelope(e), e.revision, nowMs, out);
      this.#noteEnqueued(out);
      await this.#timed(() =>
        store.enqueue(
          out,
          { key: CURSOR, value: (chunk[chunk.length - 1] as StoredEvent).id },
          this.#fanOut.gate.takeChanged(),
        ),
      );
    }
  }

  /** Fan-out, then delivery rounds until nothing is due at the clock's time (read once, at the start). Calls are serialised. */
  advance(): Promise<void> {
    return this.#serial(async () => {
      const nowMs = this.#o.clock.now();
      await this.#fanOutAt(nowMs);
      await this.#deliverDue(nowMs, this.#o.awaitLanes !== false);
      await this.#prune(nowMs);
    });
  }

  /**
   * The end of a run: retries still waiting are delivered at their due instants, in order, up
   * to `untilMs` (simulated time beyond the platform's clock, which stays where the run ended;
   * each attempt is signed with its own instant). Disabled endpoints keep their outbox. Lanes
   * running on their own (over their budget: a hanging endpoint, a slow one's backlog) are left
   * out of that walk and waited for up to `drainMs` of wall time in all, and past it while they
   * are back within their budget (a budget is about isolation, not about dropping work); then
   * the slow ones start no other round, and what they have not delivered stays pending in the
   * store (the summary says how much per subscription; `--resume` or `serve` on the store
   * delivers it).
   */
  settle(untilMs: number): Promise<void> {
    return this.#serial(async () => {
      let t = this.#o.clock.now();
      await this.#fanOutAt(t);
      await this.#deliverDue(t, true);
      const drain = delay(this.#o.drainMs ?? DEFAULT_DRAIN_MS);
      try {
        for (;;) {
          for (
            let next = await this.#nextDueOfIdleLanes();
            next !== null && next <= untilMs;
            next = await this.#nextDueOfIdleLanes()
          ) {
            t = Math.max(t, next);
            await this.#deliverDue(t, true);
          }
          // A lane that ends within the bound joins the walk (its retries go at their instants).
          if (!this.#lanes.anyBusy()) break;
          if (await this.#lanes.oneEnds(drain.elapsed)) continue;
          // The bound is for slow lanes: one back within its allowance (a recovered endpoint
          // with a backlog) is waited for as an advance waits for it — until it ends, or its
          // debt passes the budget again — then joins the walk. Only slow lanes are cut.
          if (!(await this.#lanes.wait(this.#lanes.running()))) break;
        }
      } finally {
        drain.cancel();
      }
      if (!this.#lanes.anyBusy()) return;
      this.#lanes.halt();
      // The rounds in flight end and are recorded, a bounded time; those still out then are cut
      // (failed attempts, pending): what the summary counts as pending is what the store keeps.
      if (await this.#lanes.idle(this.#o.laneBudgetMs ?? DEFAULT_LANE_BUDGET_MS)) return;
      for (const key of this.#lanes.running()) await this.#o.sender.closeLane(key);
      await this.#lanes.idle(this.#o.laneBudgetMs ?? DEFAULT_LANE_BUDGET_MS);
    });
  }

  /** The earliest due instant of an enabled subscription whose lane is not running on its own. */
  #nextDueOfIdleLanes(): Promise<number | null> {
    const { service, sender } = this.#o;
    return this.#o.store.nextDueMs(
      service
        .all()
        .filter((s) => s.status === 'ENABLED' && !this.#lanes.busy(sender.laneOf(s)))
        .map((s) => s.id),
    );
  }

  /**
   * Stops delivery: no lane starts another round; the rounds in flight end with the sender's
   * connections (closed by the caller between this and `closed`).
   */
  stop(): void {
    this.#closing = true;
    this.#lanes.halt();
  }

  /** Resolves when every lane's drain has ended (after `stop` and the sender's close), or after `withinMs`. */
  async closed(withinMs: number): Promise<void> {
    await this.#lanes.idle(withinMs);
  }

  /** Runs `work` after every call before it (a failed one does not stop the next). */
  #serial(work: () => Promise<void>): Promise<void> {
    const run = this.#running.then(work);
    this.#running = run.catch(() => undefined);
    return run;
  }

  /**
   * Asks every enabled subscription's lane for a pass up to `nowMs`, and waits for them (each
   * within its budget) when `wait`.
   */
  async #deliverDue(nowMs: number, wait: boolean): Promise<void> {
    const { service, sender } = this.#o;
    const keys = new Set<string>();
    for (const s of service.all()) if (s.status === 'ENABLED') keys.add(sender.laneOf(s));
    this.#lanes.forget(keys);
    sender.retire(keys);
    for (const key of keys)
      this.#lanes.request(key, nowMs, (horizonMs, control) => this.#pass(key, horizonMs, control));
    if (wait) await this.#lanes.wait(keys);
  }

  /**
   * One pass of a lane: its subscription's due deliveries, drained. A lane is one subscription
   * (sender.ts `laneOf`), so no subscription waits for another's backlog, not even one of its
   * organisation's at the same endpoint (issue 33 item 2): each subscription's own sequence of
   * requests is what repeats across runs, not their interleaving at a shared receiver. The
   * walk is by id because a lane's key changes with its subscription's URL, limit or timeout:
   * the pass of the old key may still be draining it (`#draining`: one pass at a time).
   */
  async #pass(key: string, nowMs: number, control: PassControl): Promise<void> {
    const stopping = (): boolean => control.halted() || this.#closing;
    for (const s of this.#o.service.all()) {
      if (stopping()) return;
      if (s.status !== 'ENABLED' || this.#draining.has(s.id) || this.#o.sender.laneOf(s) !== key) continue;
      this.#draining.add(s.id);
      try {
        await this.#drainEndpoint(s.id, nowMs, stopping, control);
      } finally {
        this.#draining.delete(s.id);
      }
    }
  }

  /**
   * Rounds of one subscription, two in flight: the next round is read and sent while the
   * previous one's answers arrive, so the connection's pipeline never drains between rounds.
   * Rounds are read, sent and recorded strictly in turn, so runs repeat exactly. Each completed
   * round is reported to the lane (its time budget).
   */
  async #drainEndpoint(id: string, nowMs: number, stopping: () => boolean, lane: PassControl): Promise<void> {
    let inflight: Round | null = null;
    for (;;) {
      const next: Delivery[] = this.#enabled(id) && !stopping() ? await this.#nextRound(id, nowMs, inflight) : [];
      // Looked up after the read: an update made while it was read (disabled, a new URL) applies to this round.
      const s = this.#enabled(id);
      const started: Round | null =
        s && next.length > 0
          ? { s, due: next, outcomes: Promise.all(next.map((d) => this.#attempt(s, d, nowMs))) }
          : null;
      if (inflight) {
        const round = inflight;
        const outcomes = await round.outcomes;
        const records = round.due.map((d, i) => this.#record(round.s, d, outcomes[i] as Outcome, nowMs));
        await this.#timed(() => this.#o.store.recordAttempts(records));
        await this.#trackFailing(round.s, outcomes, nowMs);
        lane.progress(round.due.length);
      }
      if (!started) return;
      inflight = started;
    }
  }

  /** The subscription while it exists and is enabled. */
  #enabled(id: string): Subscription | null {
    const s = this.#o.service.all().find((x) => x.id === id);
    return s && s.status === 'ENABLED' ? s : null;
  }

  /**
   * The next round: due deliveries after the last one in flight, in the store's order. What
   * becomes due behind it meanwhile (a replay while serving) waits for the next `advance`.
   */
  #nextRound(id: string, nowMs: number, inflight: Round | null): Promise<Delivery[]> {
    const batch = this.#o.batch ?? 256;
    const last = inflight?.due[inflight.due.length - 1];
    return this.#timed(() =>
      last ? this.#o.store.dueAfter(id, nowMs, last, batch) : this.#o.store.due(id, nowMs, batch),
    );
  }

  /**
   * A store call, its wall time added to `storeMs`: from before the call (on SQLite the work is
   * done in it, synchronously) to its answer (PostgreSQL: the round trip too).
   */
  async #timed<T>(call: () => Promise<T>): Promise<T> {
    const wall = this.#o.wallTime;
    if (!wall) return call();
    const t0 = wall();
    try {
      return await call();
    } finally {
      this.#storeMs += wall() - t0;
    }
  }

  #attempt(s: Subscription, d: Delivery, nowMs: number): Promise<Outcome> {
    const timestampS = Math.floor((this.#o.timestampClock?.() ?? nowMs) / 1000);
    // Built literally (no spread, no intermediate headers object): one object shape for every
    // request, on the per-delivery path.
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'occusim-webhooks/1',
      'webhook-id': d.eventId,
      'webhook-timestamp': String(timestampS),
      'webhook-signature': signatureHeader(s.secrets, d.eventId, timestampS, d.body),
      // The delivery's place in the subscription's outbox: the platform's order of its events,
      // which a consumer keeps the latest by when retries or faults change the arrival order.
      'occusim-sequence': String(d.id),
    };
    const sent = this.#o.sender.send({ subscription: s, body: d.body, headers, nowMs });
    const wall = this.#o.wallTime;
    if (!wall) return sent;
    const t0 = wall();
    if (!this.#span.has(s.id)) this.#span.set(s.id, { first: t0, last: t0 });
    return sent;
  }

  #record(s: Subscription, d: Delivery, o: Outcome, nowMs: number): AttemptRecord {
    const c = this.#count(s.id);
    if (o.kind === 'delivered') {
      c.delivered++;
      this.#sensingAge.add(Math.max(0, nowMs - d.eventTimestampMs));
      this.#o.storms?.noteDelivered(s.id, d.eventId);
      const waiting = this.#enqueuedWall.get(s.id);
      const t0 = waiting?.get(d.eventId);
      if (this.#o.wallTime) {
        const t = this.#o.wallTime();
        const span = this.#span.get(s.id);
        if (span) span.last = t;
        if (t0 !== undefined) {
          let l = this.#latencies.get(s.id);
          if (!l) this.#latencies.set(s.id, (l = []));
          l.push(t - t0);
          waiting?.delete(d.eventId);
        }
      }
      return { id: d.id, result: 'delivered', atMs: nowMs };
    }
    const delay = nextDelayMs(this.#o.retry ?? DEFAULT_RETRY, d.attempts + 1, o, this.#rng(s.id));
    if (delay === null) {
      c.deadLettered++;
      return { id: d.id, result: 'dead', error: o.reason };
    }
    c.retried++;
    return { id: d.id, result: 'retry', nextAttemptMs: nowMs + delay, error: o.reason };
  }

  /** Failing since the first failure after a success; disabled once failing for `disableAfterMs`. */
  #trackFailing(s: Subscription, outcomes: readonly Outcome[], nowMs: number): Promise<void> {
    const delivered = outcomes.some((o) => o.kind === 'delivered');
    const disableAfterMs = this.#o.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS;
    // Decided from the subscription as it is when the change runs (a user's update meanwhile wins).
    return this.#o.service.changeState(s.id, (current) => {
      if (delivered) return current.failingSinceMs !== null ? { ...current, failingSinceMs: null } : null;
      const since = current.failingSinceMs ?? nowMs;
      if (nowMs - since >= disableAfterMs) {
        if (current.status === 'DISABLED') return null;
        this.#count(s.id).disabled++;
        return {
          ...current,
          failingSinceMs: since,
          status: 'DISABLED',
          disabledReason: `failing since ${new Date(since).toISOString()}`,
        };
      }
      return current.failingSinceMs === null ? { ...current, failingSinceMs: since } : null;
    });
  }

  /** The earliest instant a delivery of an enabled subscription is due (a wall-clock platform sleeps until then). */
  nextDueMs(): Promise<number | null> {
    return this.#o.store.nextDueMs(
      this.#o.service
        .all()
        .filter((s) => s.status === 'ENABLED')
        .map((s) => s.id),
    );
  }

  /** The counts of this process, and what each subscription still has pending in the store. */
  async stats(): Promise<EngineStats> {
    const subscriptions: SubscriptionStats[] = [];
    const endpoints: EndpointPerf[] = [];
    for (const s of this.#o.service.all()) {
      const counts = this.#count(s.id);
      subscriptions.push({ id: s.id, name: s.name, ...counts, pending: (await this.#o.store.counts(s.id)).pending });
      const l = this.#latencies.get(s.id) ?? [];
      const span = this.#span.get(s.id);
      const spanMs = span ? span.last - span.first : 0;
      endpoints.push({
        id: s.id,
        name: s.name,
        latencyP50Ms: percentile(l, 50),
        latencyP99Ms: percentile(l, 99),
        deliveredPerWallS: spanMs > 0 ? counts.delivered / (spanMs / 1000) : 0,
      });
    }
    const all = [...this.#latencies.values()].flat();
    return {
      subscriptions,
      endpoints,
      latencyP50Ms: percentile(all, 50),
      latencyP99Ms: percentile(all, 99),
      timestamps: this.#o.timestampClock ? 'wall' : 'simulated',
      keepUp: {
        enqueued: this.#enqueued,
        busyWallMs: this.#lanes.busyMs(),
        sensingToDeliveredSimMs: {
          p50: this.#sensingAge.percentile(50) || 0,
          p99: this.#sensingAge.percentile(99) || 0,
          max: this.#sensingAge.percentile(100) || 0,
        },
        load: {
          loopActiveMs: this.#o.loopActiveMs ? this.#lanes.busyLoopActiveMs() : null,
          storeMs: this.#storeMs,
          answered: this.#o.answerTimes?.count ?? 0,
          responseP50Ms: this.#o.answerTimes?.percentileMs(50) ?? 0,
          responseP99Ms: this.#o.answerTimes?.percentileMs(99) ?? 0,
          inFlight: this.#o.inFlight ?? 1,
        },
      },
    };
  }

  /**
   * Delivered rows go with the event outbox's retention (7 days of the 1-minute series): a time
   * range can be replayed as long as its events are kept. Dead letters stay until replayed.
   */
  async #prune(nowMs: number): Promise<void> {
    if (nowMs - this.#lastPrune < HOUR_MS) return;
    this.#lastPrune = nowMs;
    await this.#o.store.pruneDelivered(nowMs - RETENTION_MS['1m']);
  }

  #noteEnqueued(batch: readonly DeliveryInsert[]): void {
    this.#enqueued += batch.length;
    if (!this.#o.wallTime) return;
    const t = this.#o.wallTime();
    for (const d of batch) {
      let waiting = this.#enqueuedWall.get(d.subscriptionId);
      if (!waiting) this.#enqueuedWall.set(d.subscriptionId, (waiting = new Map()));
      waiting.set(d.eventId, t);
    }
  }

  #count(id: string): { delivered: number; retried: number; deadLettered: number; disabled: number } {
    let c = this.#counts.get(id);
    if (!c) this.#counts.set(id, (c = { delivered: 0, retried: 0, deadLettered: 0, disabled: 0 }));
    return c;
  }

  #rng(id: string): Rng {
    let r = this.#rngs.get(id);
    if (!r) this.#rngs.set(id, (r = rngFor(this.#o.seed, `webhook-retry:${id}`)));
    return r;
  }
}

/** A timer of `ms` as a promise (`elapsed`), cancellable. */
function delay(ms: number): { elapsed: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()));
  return { elapsed, cancel: () => clearTimeout(timer) };
}
