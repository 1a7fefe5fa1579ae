import type { Cloud, CloudCounters, PresenceMinute, TrafficMinute } from '../cloud/cloud.js';
import type { EventEnvelope } from '../cloud/events.js';
import type { OccupancyPoint, TrafficSpace } from '../cloud/traffic-occupancy.js';
import type { WebhookStats } from '../webhooks/platform-hooks.js';
import type { PlatformFaultCounts } from './platform-faults.js';
/** What the run's report carries of webhooks (the run reaches webhooks only through the platform). */
export type { StateRow as ConsumerStateRow } from '../webhooks/consumer-state.js';
export type { FaultCounts } from '../webhooks/faults.js';
export type { StormCounts } from '../webhooks/storm.js';
export type { WebhookStats } from '../webhooks/platform-hooks.js';

/**
 * The platform's read side as the simulator's report sees it: asynchronous, plain data, so
 * the platform can answer from its own thread or process. A report asks once
 * (`report(request)`) and gets everything it compares with truth in one answer.
 */
export interface ReportRequest {
  /** Spaces whose per-minute presence the report compares with truth. */
  spaceIds: readonly string[];
  /** Traffic sensors whose in/out minutes it sums. */
  trafficSensorIds: readonly string[];
  /** Minutes of traffic occupancy: [fromMs, toMs). */
  fromMs: number;
  toMs: number;
}

export interface ReportData {
  counters: CloudCounters;
  /** Sensing → processed latency of every processed packet, sim ms, as distinct values and their counts (`ValueCounts.toArrays`). */
  latenciesMs: { values: Float64Array; counts: Float64Array };
  presence: Record<string, PresenceMinute[]>;
  traffic: Record<string, TrafficMinute[]>;
  trafficSpaces: TrafficSpace[];
  trafficOccupancy: Record<string, { raw: OccupancyPoint[]; calibrated: OccupancyPoint[] }>;
  /** The store restarts and ingest kills the platform applied (a run's schedule); absent when it had none. */
  platformFaults?: PlatformFaultCounts;
}

export interface DeadLetterView {
  receivedAtMs: number;
  topic: string;
  reason: string;
  message: string;
}

export interface PlatformReads {
  counters(): Promise<CloudCounters>;
  presenceMinutes(spaceId: string): Promise<PresenceMinute[]>;
  trafficMinutes(sensorId: string): Promise<TrafficMinute[]>;
  deadLetters(): Promise<DeadLetterView[]>;
  /** Outbox events after `afterId` as spec §6 envelopes (metadata from the catalogue now), at most `limit`. */
  eventEnvelopes(afterId: number, limit: number): Promise<Array<{ id: number; envelope: EventEnvelope }>>;
  report(request: ReportRequest): Promise<ReportData>;
  /** Webhook deliveries per subscription and their latency; null when the platform delivers none. */
  webhookStats(): Promise<WebhookStats | null>;
}

/** What `reportData` reads: the cloud's, or a store's alone (`report merge --store`, src/run/store-accuracy.ts). */
export type ReportReads = Pick<
  Cloud,
  'counters' | 'latenciesMs' | 'presenceMinutes' | 'trafficMinutes' | 'trafficSpaces' | 'trafficOccupancy'
>;

/** Answers a report request from the cloud (in the platform's thread). */
export async function reportData(cloud: ReportReads, req: ReportRequest): Promise<ReportData> {
  const presence: ReportData['presence'] = {};
  for (const id of req.spaceIds) presence[id] = await cloud.presenceMinutes(id);
  const traffic: ReportData['traffic'] = {};
  for (const id of req.trafficSensorIds) traffic[id] = await cloud.trafficMinutes(id);
  const trafficSpaces = [...cloud.trafficSpaces()];
  const trafficOccupancy: ReportData['trafficOccupancy'] = {};
  for (const s of trafficSpaces) {
    trafficOccupancy[s.spaceId] = {
      raw: await cloud.trafficOccupancy(s.spaceId, req.fromMs, req.toMs, false),
      calibrated: await cloud.trafficOccupancy(s.spaceId, req.fromMs, req.toMs, true),
    };
  }
  return {
    counters: cloud.counters(),
    latenciesMs: cloud.latenciesMs().toArrays(),
    presence,
    traffic,
    trafficSpaces,
    trafficOccupancy,
  };
}

/** The platform's reads over an in-thread cloud. */
export function cloudReads(
  cloud: Cloud,
  webhookStats: (() => Promise<WebhookStats>) | null = null,
  faultCounts: (() => PlatformFaultCounts) | null = null,
): PlatformReads {
  return {
    counters: () => Promise.resolve(cloud.counters()),
    presenceMinutes: (id) => cloud.presenceMinutes(id),
    trafficMinutes: (id) => cloud.trafficMinutes(id),
    deadLetters: () => cloud.deadLetters(),
    eventEnvelopes: (afterId, limit) => cloud.eventEnvelopes(afterId, limit),
    report: async (req) => ({
      ...(await reportData(cloud, req)),
      ...(faultCounts ? { platformFaults: faultCounts() } : {}),
    }),
    webhookStats: () => (webhookStats ? webhookStats() : Promise.resolve(null)),
  };
}
