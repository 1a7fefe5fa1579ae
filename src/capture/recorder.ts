import { parseHiveTopic, type HiveTopicKind } from '../core/topics.js';
import type { ScenarioModel } from '../scenario/model.js';
import { captureHeader, CaptureWriter } from './format.js';
import { rawDecode, rawUplink, type RawAckFields, type RawHeartbeatFields } from './rules.js';

/**
 * Records every message the embedded broker accepts, each stamped with `capturedAt`'s simulated
 * time, in a canonical order: by instant, and the messages of one instant hive by hive (serial
 * order), each hive's in the order the broker accepted them. The hives publish concurrently on
 * their own connections, so the order *between* hives is the sockets', not the simulation's;
 * a hive's own messages (its uplinks, the cloud's acks to it, its heartbeat) follow one another
 * causally, so their order is kept. One instant's messages are held until a later instant's
 * arrive (or the end): at most one delivery's.
 */
export interface Recorder {
  onPublish(topic: string, payload: Buffer, atMs: number): void;
  readonly count: number;
  close(): void;
}

interface Pending {
  t: number;
  serial: string;
  topic: string;
  payload: Buffer;
}

export function startRecording(path: string, model: ScenarioModel): Recorder {
  const hives = model.hives.map((h) => ({
    serial: h.serial,
    sensors: model.sensors.filter((s) => s.hiveId === h.id).map((s) => s.mac),
  }));
  const writer = new CaptureWriter(
    path,
    captureHeader({ scenario: model.name, seed: model.seed, startMs: model.startMs, hives }),
  );
  let pending: Pending[] = [];
  let closed = false;
  const writePending = (): void => {
    // Array.prototype.sort is stable: a hive's messages keep the order they were accepted in.
    for (const m of pending.sort((a, b) => (a.serial < b.serial ? -1 : a.serial > b.serial ? 1 : 0)))
      writer.write(m.t, m.topic, m.payload);
    pending = [];
  };
  return {
    onPublish(topic, payload, atMs) {
      if (closed) return;
      const hive = parseHiveTopic(topic);
      const t = capturedAt(hive?.kind, payload, atMs);
      if (pending.length > 0 && pending[0]!.t !== t) writePending();
      // The broker may reuse the payload's buffer once its listeners return.
      pending.push({ t, serial: hive?.serial ?? '', topic, payload: Buffer.from(payload) });
    },
    get count() {
      return writer.count + pending.length;
    },
    close() {
      if (closed) return;
      closed = true;
      writePending();
      writer.close();
    },
  };
}

/**
 * A message's time in a capture (`kind`: its hive topic's, if any): the instant it says it was sent (an uplink's or a heartbeat's
 * `sent_at_ms`, an ack's `acked_at_ms`), or, for one that carries none or does not decode, the
 * platform's time when the broker accepted it. Not the acceptance time alone: the broker
 * hands an ack to its subscriber before it reports the publish, and by then the run may have
 * moved the platform's clock on to the next delivery or not, as the event loop's turns fall, so
 * a capture of the same run was not the same bytes. The senders' instants are the simulation's.
 */
function capturedAt(kind: HiveTopicKind | undefined, payload: Uint8Array, acceptedAtMs: number): number {
  const sent =
    kind === 'uplink'
      ? rawUplink(payload)
      : kind === 'heartbeat'
        ? rawDecode<RawHeartbeatFields>('HiveHeartbeat', payload)
        : kind === 'ack'
          ? rawDecode<RawAckFields>('UplinkAck', payload)
          : null;
  if (sent === null || typeof sent === 'string') return acceptedAtMs;
  const t = 'ackedAtMs' in sent ? sent.ackedAtMs : sent.sentAtMs;
  return Number.isSafeInteger(t) && t > 0 ? t : acceptedAtMs;
}
