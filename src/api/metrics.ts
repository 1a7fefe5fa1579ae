import { createHash, timingSafeEqual } from 'node:crypto';
import type { ValueCounts } from '../core/value-counts.js';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AssetCatalogue } from '../assets/catalogue.js';
import type { CloudCounters } from '../cloud/pipeline.js';
import type { EngineStats } from '../webhooks/engine.js';
import { RequestStatus, type StatusSource } from './status.js';

/**
 * Prometheus metrics of the served platform at `GET /metrics` (text exposition format 0.0.4),
 * so a load test can be watched in Prometheus/Grafana. Nothing is counted twice: every value
 * is read at scrape time from what the platform already counts (the pipeline's counters, the
 * webhook engine's ledger, the store's heartbeats), so `/metrics` agrees with the run report
 * by construction. docs/metrics.md lists every series.
 *
 * Two views (issue 33, item 5): without a token, platform-wide totals only — no organisation
 * id, hive id or serial, no subscription id or name, since the scrape is open to anyone who
 * reaches the port. With `Authorization: Bearer <--metrics-token>` the operator's scraper sees
 * the same series per organisation, hive and subscription. A wrong token is a 401, never a
 * silent downgrade, so a misconfigured scraper notices.
 */
export interface MetricsSource {
  counters(): CloudCounters;
  /** Sensing → processed latency of every processed packet (simulated ms), in processing order. */
  latenciesMs(): ValueCounts;
  /** Null when the platform delivers no webhooks (asynchronous: pending counts are read from the store). */
  webhookStats(): Promise<EngineStats | null>;
  status: StatusSource;
  catalogue: AssetCatalogue;
  /** An ingest process with partition leases (docs/scale-out.md, Failover): what it owns; absent otherwise. */
  leases?: () => LeaseGauges;
}

/** What /metrics and the readiness endpoint show of a process's partition leases. */
export interface LeaseGauges {
  ready: boolean;
  owned: ReadonlyArray<{ partition: string; leaseAgeMs: number }>;
  batchesBehind: number;
  fencedWrites: number;
}

/** Ready when the process is in the lease protocol (it owns partitions or stands by for them); 503 otherwise. */
export const READY_PATH = '/health/ready';

export const METRICS_PATH = '/metrics';

/** Who scrapes: anyone (tenant-free totals), or the operator's scraper (per tenant, hive, subscription). */
export type MetricsView = 'public' | 'operator';

/** Bounds of `--metrics-token`: long enough not to be guessed, printable, no spaces (a bearer token). */
export const METRICS_TOKEN_MIN = 16;
export const METRICS_TOKEN_MAX = 256;

/** Why a `--metrics-token` value is refused, or null when it is usable. */
export function metricsTokenProblem(token: string): string | null {
  if (token.length < METRICS_TOKEN_MIN || token.length > METRICS_TOKEN_MAX)
    return `--metrics-token must be ${METRICS_TOKEN_MIN}–${METRICS_TOKEN_MAX} characters (got ${token.length})`;
  if (!/^[\x21-\x7e]+$/.test(token)) return '--metrics-token must be printable ASCII without spaces';
  return null;
}

/** Ingest lag buckets, seconds: a batch interval (10 s) plus mesh hops and retransmissions. */
const LAG_BUCKETS = [0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120, 300];

type Rows = Array<[Record<string, string>, number]>;

/** A Prometheus counter whose value is read from the platform's own tally at scrape time. */
function mirrored(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly string[],
  read: () => Rows | Promise<Rows>,
): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      // Read first, then reset and set: the counter is never seen half filled.
      const rows = await read();
      this.reset();
      for (const [labels, v] of rows) this.inc(labels, v);
    },
  });
}

export function metricsRegistry(src: MetricsSource, view: MetricsView = 'operator'): Registry {
  const registry = new Registry();
  const c = (): CloudCounters => src.counters();
  mirrored(
    registry,
    'occusim_messages_in_total',
    'MQTT uplink batches the cloud received (duplicates included)',
    [],
    () => [[{}, c().batchesReceived]],
  );
  mirrored(registry, 'occusim_batches_processed_total', 'Uplink batches accepted and processed', [], () => [
    [{}, c().batchesProcessed],
  ]);
  mirrored(
    registry,
    'occusim_duplicate_batches_total',
    'Uplink batches dropped as duplicates (retransmissions)',
    [],
    () => [[{}, c().duplicateBatches]],
  );
  mirrored(registry, 'occusim_packets_processed_total', 'Sensor packets processed by the pipeline', [], () => [
    [{}, c().packetsProcessed],
  ]);
  mirrored(registry, 'occusim_dead_letters_total', 'Uplink messages refused into the dead-letter table', [], () => [
    [{}, c().deadLettered],
  ]);
  mirrored(registry, 'occusim_occupancy_events_total', 'Occupancy events emitted into the outbox (spec §6)', [], () => [
    [{}, c().eventsEmitted],
  ]);
  mirrored(
    registry,
    'occusim_late_packets_total',
    'Packets for a minute already computed: inside the recompute window (revising it) or beyond it',
    ['window'],
    () => [
      [{ window: 'inside' }, c().lateInWindow],
      [{ window: 'beyond' }, c().lateBeyondWindow],
    ],
  );
  mirrored(
    registry,
    'occusim_messages_out_total',
    'Messages the platform sent: occupancy events and webhook deliveries (2xx)',
    ['channel'],
    async () => [
      [{ channel: 'events' }, c().eventsEmitted],
      [{ channel: 'webhooks' }, sum(await src.webhookStats(), (s) => s.delivered)],
    ],
  );
  webhookMetrics(registry, src, view);
  if (src.leases) leaseMetrics(registry, src.leases);
  lagHistogram(registry, src);
  if (view === 'operator') onlineGauges(registry, src);
  else onlineTotals(registry, src);
  return registry;
}

function sum(stats: EngineStats | null, pick: (s: EngineStats['subscriptions'][number]) => number): number {
  return stats ? stats.subscriptions.reduce((a, s) => a + pick(s), 0) : 0;
}

function webhookMetrics(registry: Registry, src: MetricsSource, view: MetricsView): void {
  type Sub = EngineStats['subscriptions'][number];
  // The operator's view per subscription; the public one the platform's sum (a subscription's id and name are its tenant's).
  const labelNames = view === 'operator' ? ['subscription', 'name'] : [];
  const rows = (subscriptions: readonly Sub[], pick: (s: Sub) => number): Rows =>
    view === 'operator'
      ? subscriptions.map((s) => [{ subscription: s.id, name: s.name }, pick(s)])
      : [[{}, subscriptions.reduce((a, s) => a + pick(s), 0)]];
  const per = (pick: (s: Sub) => number) => async (): Promise<Rows> =>
    rows((await src.webhookStats())?.subscriptions ?? [], pick);
  const each = view === 'operator' ? ', per subscription' : '';
  mirrored(
    registry,
    'occusim_webhook_deliveries_total',
    `Webhook deliveries answered 2xx${each}`,
    labelNames,
    per((s) => s.delivered),
  );
  mirrored(
    registry,
    'occusim_webhook_failures_total',
    `Webhook attempts that failed and were scheduled again${each}`,
    labelNames,
    per((s) => s.retried),
  );
  mirrored(
    registry,
    'occusim_webhook_dead_letters_total',
    `Webhook deliveries given up${each}`,
    labelNames,
    per((s) => s.deadLettered),
  );
  new Gauge({
    name: 'occusim_webhook_pending',
    help: `Webhook deliveries waiting (due or retrying)${each}`,
    labelNames,
    registers: [registry],
    async collect() {
      const read = rows((await src.webhookStats())?.subscriptions ?? [], (s) => s.pending);
      this.reset();
      for (const [labels, v] of read) this.set(labels, v);
    },
  });
}

function leaseMetrics(registry: Registry, leases: () => LeaseGauges): void {
  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    read: () => Array<[Record<string, string>, number]>,
  ): void =>
    void new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const [labels, v] of read()) this.set(labels, v);
      },
    });
  gauge('occusim_partitions_owned', 'Floor partitions this ingest process holds the lease of', [], () => [
    [{}, leases().owned.length],
  ]);
  gauge(
    'occusim_partition_lease_age_seconds',
    'Wall seconds since this process last renewed its lease, per partition held',
    ['partition'],
    () => leases().owned.map((o) => [{ partition: o.partition }, o.leaseAgeMs / 1000]),
  );
  gauge('occusim_ingest_batches_behind', 'Uplink batches received and not yet stored', [], () => [
    [{}, leases().batchesBehind],
  ]);
  gauge(
    'occusim_ingest_ready',
    '1 while the process owns or stands by for partitions (its last lease round succeeded within a lease)',
    [],
    () => [[{}, leases().ready ? 1 : 0]],
  );
  mirrored(
    registry,
    'occusim_fenced_writes_total',
    'Aggregation writes refused because another process had taken the lease (fencing)',
    [],
    () => [[{}, leases().fencedWrites]],
  );
}

/**
 * Observes only the latencies added since the previous scrape: a scrape costs the new packets,
 * not the run's history.
 */
function lagHistogram(registry: Registry, src: MetricsSource): void {
  // What was observed so far per value: a scrape observes only what arrived since the last.
  const seen = new Map<number, number>();
  new Histogram({
    name: 'occusim_ingest_lag_seconds',
    help: 'Simulated time from a packet being sensed to the cloud processing it',
    buckets: LAG_BUCKETS,
    registers: [registry],
    collect() {
      for (const [ms, count] of src.latenciesMs().entries()) {
        const before = seen.get(ms) ?? 0;
        for (let k = before; k < count; k++) this.observe(ms / 1000);
        seen.set(ms, count);
      }
    },
  });
}

function onlineGauges(registry: Registry, src: MetricsSource): void {
  const { catalogue } = src;
  new Gauge({
    name: 'occusim_hive_online',
    help: "1 when the hive heartbeat is recent against the organisation's newest heartbeat (as GraphQL isOnline), else 0",
    labelNames: ['org', 'hive', 'serial'],
    registers: [registry],
    async collect() {
      // Read first, then reset and set: the gauge is never seen half filled.
      const rows: Array<[{ org: string; hive: string; serial: string }, number]> = [];
      for (const orgId of catalogue.orgs.keys()) {
        const status = new RequestStatus(src.status, catalogue, orgId);
        const hives = catalogue.list('hive', orgId);
        const flags = await Promise.all(hives.map((h) => status.hive(h.id)));
        hives.forEach((h, i) => rows.push([{ org: orgId, hive: h.id, serial: h.serial }, flags[i]?.online ? 1 : 0]));
      }
      this.reset();
      for (const [labels, v] of rows) this.set(labels, v);
    },
  });
  new Gauge({
    name: 'occusim_sensors_online',
    help: 'Sensors online (as GraphQL is_online), per organisation; per-sensor series would not scale to a fleet',
    labelNames: ['org', 'state'],
    registers: [registry],
    async collect() {
      const rows: Array<[{ org: string; state: string }, number]> = [];
      for (const orgId of catalogue.orgs.keys()) {
        const status = new RequestStatus(src.status, catalogue, orgId);
        const sensors = catalogue.list('sensor', orgId);
        // One batched read of the organisation's sensors, then their flags at once.
        await status.preloadSensors(sensors.map((s) => s.id));
        const online = sensors.filter((s) => status.sensorEntryNow(s.id)?.flags.online === true).length;
        rows.push(
          [{ org: orgId, state: 'online' }, online],
          [{ org: orgId, state: 'offline' }, sensors.length - online],
        );
      }
      this.reset();
      for (const [labels, v] of rows) this.set(labels, v);
    },
  });
}

/**
 * Hives and sensors online, platform-wide (the public view): counts without an organisation,
 * hive id or serial.
 */
function onlineTotals(registry: Registry, src: MetricsSource): void {
  const { catalogue } = src;
  const read = async (): Promise<{ hives: [number, number]; sensors: [number, number] }> => {
    const out = { hives: [0, 0] as [number, number], sensors: [0, 0] as [number, number] };
    for (const orgId of catalogue.orgs.keys()) {
      const status = new RequestStatus(src.status, catalogue, orgId);
      const hives = catalogue.list('hive', orgId);
      const flags = await Promise.all(hives.map((h) => status.hive(h.id)));
      const hivesOn = flags.filter((f) => f.online).length;
      const sensors = catalogue.list('sensor', orgId);
      await status.preloadSensors(sensors.map((s) => s.id));
      const sensorsOn = sensors.filter((s) => status.sensorEntryNow(s.id)?.flags.online === true).length;
      out.hives[0] += hivesOn;
      out.hives[1] += hives.length - hivesOn;
      out.sensors[0] += sensorsOn;
      out.sensors[1] += sensors.length - sensorsOn;
    }
    return out;
  };
  // One read serves both gauges of a scrape (prom-client collects them concurrently); a read twice is only slower.
  let pending: Promise<Awaited<ReturnType<typeof read>>> | null = null;
  const shared = (): Promise<Awaited<ReturnType<typeof read>>> => (pending ??= read().finally(() => (pending = null)));
  for (const [name, help, pick] of [
    [
      'occusim_hives_online',
      'Hives whose heartbeat is recent (as GraphQL isOnline), platform-wide',
      (r: Awaited<ReturnType<typeof read>>) => r.hives,
    ],
    [
      'occusim_sensors_online',
      'Sensors online (as GraphQL is_online), platform-wide',
      (r: Awaited<ReturnType<typeof read>>) => r.sensors,
    ],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        const [on, off] = pick(await shared());
        this.reset();
        this.set({ state: 'online' }, on);
        this.set({ state: 'offline' }, off);
      },
    });
  }
}

/** The scraper's view: public without Authorization, operator with the metrics token; a 401 otherwise. */
function viewOf(header: string | undefined, token: string | null): MetricsView | null {
  if (header === undefined) return 'public';
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  if (!m || token === null) return null;
  // Digests of equal length: the comparison takes the same time whatever the guess.
  const digest = (v: string): Buffer => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(m[1] as string), digest(token)) ? 'operator' : null;
}

export function registerMetrics(app: FastifyInstance, src: MetricsSource, token: string | null = null): void {
  const leases = src.leases;
  if (leases) {
    app.get(READY_PATH, async (_req, reply) => {
      const l = leases();
      return reply
        .code(l.ready ? 200 : 503)
        .header('Cache-Control', 'no-store')
        .send({
          ready: l.ready,
          partitions: l.owned.map((o) => o.partition),
          standby: l.ready && l.owned.length === 0,
        });
    });
  }
  const registries = { public: metricsRegistry(src, 'public'), operator: metricsRegistry(src, 'operator') };
  app.get(METRICS_PATH, async (req, reply) => {
    const view = viewOf(req.headers.authorization, token);
    if (view === null) {
      const why =
        token === null
          ? 'this platform has no --metrics-token: scrape /metrics without Authorization'
          : 'wrong metrics token';
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Bearer')
        .header('Cache-Control', 'no-store')
        .send({ message: why });
    }
    const registry = registries[view];
    const body = await registry.metrics();
    return reply.type(registry.contentType).header('Cache-Control', 'no-store').send(body);
  });
}
