import type { LiveTruth } from '../api/live/hub.js';
import type { ReportRequest } from './reads.js';

/**
 * What crosses the boundary between a simulator and a platform in its own worker thread
 * (one types module for both sides). The platform thread is started with its whole
 * `PlatformConfig` (plain data: it crosses as it is) and owns the catalogue, the store and
 * its clock; the simulator moves that clock and reads results with requests, each answered
 * once, in order.
 */
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
