import type { LiveTruth } from '../api/live/hub.js';
import type { ServedApi } from '../api/server.js';
import type { OrganisationAssets } from '../assets/model.js';
import type { ReportRequest } from './reads.js';
import type { StorePolicy } from '../store/guard.js';
import type { PlatformWebhookOptions } from '../webhooks/platform-hooks.js';
import type { PlatformFaultTimes } from './platform-faults.js';
import type { StoreLocation } from '../store/location.js';

/**
 * What crosses the boundary between a simulator and a platform in its own worker thread
 * (one types module for both sides). The platform thread owns the catalogue, the store and
 * its clock; the simulator moves that clock and reads results with requests, each answered
 * once, in order.
 */
export interface PlatformThreadInit {
  organisations: OrganisationAssets[];
  startMs: number;
  tickMs: number;
  /** The store's location, parsed once by the entry point (plain data); null: a temporary SQLite file. */
  store: StoreLocation | null;
  removeTemporaryStore: boolean;
  storePolicy: StorePolicy;
  runKey: string;
  /** The run's simulated end (`PlatformOptions.runEndMs`). */
  runEndMs?: number;
  mqttPort: number;
  /** Interface of the embedded broker (default 127.0.0.1; `--host`). */
  mqttHost?: string;
  brokerUrl: string | null;
  /** Ingest only the organisations' hives' topics (a simulator shard). */
  ownHivesOnly?: boolean;
  api: ServedApi | null;
  /** Webhook delivery in the platform's thread (plain data: no wall-time function crosses). */
  webhooks?: Omit<PlatformWebhookOptions, 'wallTime'> | null;
  /** The run's store_restart and ingest_kill faults (`PlatformOptions.faults`). */
  faults?: PlatformFaultTimes;
}

export interface PlatformThreadReady {
  kind: 'ready';
  brokerUrl: string;
  apiUrl: string | null;
  dbPath: string;
  canRestartBroker: boolean;
  /** The platform serves `/live`: the simulator posts its truth (`PlatformLivePost`). */
  live: boolean;
}

/**
 * The simulator's truth for `/live`, one-way (no reply, no id): it changes nothing the run
 * reads back, so it need not wait its turn behind the requests.
 */
export interface PlatformLivePost {
  op: 'publishLive';
  truth: LiveTruth;
}

export type PlatformRequest =
  | { id: number; op: 'setTime' | 'stoppedAt'; t: number }
  | { id: number; op: 'advanceTo'; t: number; next: number | null }
  | { id: number; op: 'finish' | 'counters' | 'deadLetters' | 'webhookStats' | 'close' }
  | { id: number; op: 'presenceMinutes' | 'trafficMinutes'; key: string }
  | { id: number; op: 'eventEnvelopes'; afterId: number; limit: number }
  | { id: number; op: 'report'; request: ReportRequest }
  | { id: number; op: 'restartBroker'; filters: string[] };

export type PlatformResponse =
  { kind: 'result'; id: number; value: unknown } | { kind: 'error'; id: number; code: string | null; message: string };

/** Sent once if the platform cannot start. */
export interface PlatformThreadFailed {
  kind: 'failed';
  code: string | null;
  message: string;
}
