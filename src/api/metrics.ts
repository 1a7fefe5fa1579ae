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
 * by construction. Unauthenticated, like most exporters: it carries counts, hive ids and names, no
 * occupancy data. docs/metrics.md lists every series.
 */
export interface MetricsSource {
  counters(): CloudCounters;
  /** Sensing → processed latency of every processed packet (simulated ms), in processing order. */
  latenciesMs(): ValueCounts;
  /** Null when the platform delivers no webhooks (asynchronous: pending counts are read from the store). */
  webhookStats(): Promise<EngineStats | null>;
  status: StatusSource;
  catalogue: AssetCatalogue;
}

export const METRICS_PATH = '/metrics';

/** Ingest lag buckets, seconds: a batch interval (10 s) plus mesh hops and retransmissions. */
const LAG_BUCKETS = [0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120, 300];

type Rows = Array<[Record<string, string>, number]>;

/** A Prometheus counter whose value is read from the platform's own tally at scrape time. */
function mirrored(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Rows | Promise<Rows>): void {
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

export function metricsRegistry(src: MetricsSource): Registry {
  const registry = new Registry();
  const c = (): CloudCounters => src.counters();
  mirrored(registry, 'occusim_messages_in_total', 'MQTT uplink batches the cloud received (duplicates included)', [], () => [[{}, c().batchesReceived]]);
  mirrored(registry, 'occusim_batches_processed_total', 'Uplink batches accepted and processed', [], () => [[{}, c().batchesProcessed]]);
  mirrored(registry, 'occusim_duplicate_batches_total', 'Uplink batches dropped as duplicates (retransmissions)', [], () => [[{}, c().duplicateBatches]]);
  mirrored(registry, 'occusim_packets_processed_total', 'Sensor packets processed by the pipeline', [], () => [[{}, c().packetsProcessed]]);
  mirrored(registry, 'occusim_dead_letters_total', 'Uplink messages refused into the dead-letter table', [], () => [[{}, c().deadLettered]]);
  mirrored(registry, 'occusim_occupancy_events_total', 'Occupancy events emitted into the outbox (spec §6)', [], () => [[{}, c().eventsEmitted]]);
  mirrored(registry, 'occusim_late_packets_total', 'Packets for a minute already computed: inside the recompute window (revising it) or beyond it', ['window'], () => [
    [{ window: 'inside' }, c().lateInWindow],
    [{ window: 'beyond' }, c().lateBeyondWindow],
  ]);
  mirrored(registry, 'occusim_messages_out_total', 'Messages the platform sent: occupancy events and webhook deliveries (2xx)', ['channel'], async () => [
    [{ channel: 'events' }, c().eventsEmitted],
    [{ channel: 'webhooks' }, sum(await src.webhookStats(), (s) => s.delivered)],
  ]);
  webhookMetrics(registry, src);
  lagHistogram(registry, src);
  onlineGauges(registry, src);
  return registry;
}

function sum(stats: EngineStats | null, pick: (s: EngineStats['subscriptions'][number]) => number): number {
  return stats ? stats.subscriptions.reduce((a, s) => a + pick(s), 0) : 0;
}

function webhookMetrics(registry: Registry, src: MetricsSource): void {
  const per = (pick: (s: EngineStats['subscriptions'][number]) => number) => async (): Promise<Rows> =>
    ((await src.webhookStats())?.subscriptions ?? []).map((s) => [{ subscription: s.id, name: s.name }, pick(s)]);
  mirrored(registry, 'occusim_webhook_deliveries_total', 'Webhook deliveries answered 2xx, per subscription', ['subscription', 'name'], per((s) => s.delivered));
  mirrored(registry, 'occusim_webhook_failures_total', 'Webhook attempts that failed and were scheduled again, per subscription', ['subscription', 'name'], per((s) => s.retried));
  mirrored(registry, 'occusim_webhook_dead_letters_total', 'Webhook deliveries given up, per subscription', ['subscription', 'name'], per((s) => s.deadLettered));
  new Gauge({
    name: 'occusim_webhook_pending',
    help: 'Webhook deliveries waiting (due or retrying), per subscription',
    labelNames: ['subscription', 'name'],
    registers: [registry],
    async collect() {
      const subscriptions = (await src.webhookStats())?.subscriptions ?? [];
      this.reset();
      for (const s of subscriptions) this.set({ subscription: s.id, name: s.name }, s.pending);
    },
  });
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
    help: '1 when the hive heartbeat is recent against the organisation\'s newest heartbeat (as GraphQL isOnline), else 0',
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
        rows.push([{ org: orgId, state: 'online' }, online], [{ org: orgId, state: 'offline' }, sensors.length - online]);
      }
      this.reset();
      for (const [labels, v] of rows) this.set(labels, v);
    },
  });
}

export function registerMetrics(app: FastifyInstance, src: MetricsSource): void {
  const registry = metricsRegistry(src);
  app.get(METRICS_PATH, async (_req, reply) => {
    const body = await registry.metrics();
    return reply.type(registry.contentType).send(body);
  });
}
