import type { ScenarioModel } from '../scenario/model.js';
import type { HiveGroupReport } from './delivery-report.js';
import type { GroupFlush } from './hive-group.js';

/**
 * What crosses the boundary between the run and a hive thread (one types module for both
 * sides, as in platform/thread-messages.ts). A hive thread simulates its share of the hives —
 * their meshes, batching and MQTT links — and answers requests one at a time, in order.
 */
export interface HiveThreadInit {
  /** The thread's share of the scenario (hiveShareModel): its hives, their sensors, their floors' rooms. */
  model: ScenarioModel;
  /** The hives this thread simulates (ids, in scenario order). */
  hiveIds: string[];
  ackTimeoutMs: number;
}

/**
 * The broker to log in to: a thread builds its meshes as soon as it starts (a run starts its
 * hive threads while the platform is still starting) and logs its hives in on this message,
 * its first; answered by the ready message.
 */
export interface HiveThreadConnect {
  op: 'connect';
  brokerUrl: string;
}

/**
 * The packets (packet-transfer.ts) of the thread's sensors for the next flush. Posted while
 * the previous flush may still wait for acks; they enter the meshes once that flush has cut
 * its batches (mesh-delivery.ts, HiveGroups), never before. No answer: a failure is the next flush's.
 */
export interface HiveThreadPost {
  op: 'submit';
  packets: Float64Array;
}

/**
 * A submit's buffer handed back (transferred) once the last of its packets has left the
 * thread's meshes: the thread never reads it again, and the run's hand-off writer for this
 * thread fills it at a later submit instead of allocating one (an interval's share is MBs).
 */
export interface HiveThreadReturned {
  kind: 'returned';
  packets: Float64Array;
}

export type HiveThreadRequest =
  /** The hives publish what has reached them by `atMs` and wait for the cloud's acks. */
  { op: 'flush'; id: number; atMs: number } | { op: 'report'; id: number; nowMs: number } | { op: 'close'; id: number };

export type HiveThreadResponse =
  | { kind: 'result'; id: number; value: GroupFlush | HiveGroupReport | null }
  | { kind: 'error'; id: number; code: string | null; message: string };

export type HiveThreadStarted = { kind: 'ready' } | { kind: 'failed'; code: string | null; message: string };
