import { parseHiveTopic, type HiveTopicKind } from '../core/topics.js';
import {
  CLOCK_SKEW_TOLERANCE_MS,
  HEARTBEAT_INTERVAL_MS,
  MAX_HEARTBEAT_BYTES,
  MAX_PACKETS_PER_BATCH,
  MAX_PAYLOAD_BYTES,
} from '../proto/limits.js';
import type { CaptureHeader, CapturedMessage } from './format.js';
import {
  packetsKey,
  rawDecode,
  rawUplink,
  type RawAckFields,
  type RawHeartbeatFields,
  type RawUplinkFields,
  type Rule,
  type Violation,
} from './rules.js';

/**
 * Protocol conformance of hive traffic (docs/protocol.md §Conformance), incremental so the
 * same checker serves recorded captures and live devices: `check` each message in order,
 * then `finish` for what can only be judged at the end (gaps never filled).
 */
export interface Checker {
  check(m: CapturedMessage): Violation[];
  finish(): Violation[];
  counts(): { messages: number; uplinks: number; acks: number; heartbeats: number; retransmissions: number };
}

export interface CheckerOptions {
  /** Sensing-time tolerance for per-sensor monotonicity and for clock skew; default 2 s. */
  skewToleranceMs?: number;
  /** A connected hive heartbeats at this interval (docs/protocol.md §3: 60 s); default HEARTBEAT_INTERVAL_MS. */
  heartbeatIntervalMs?: number;
}

/**
 * A hive that keeps publishing uplinks for more than 1.5 heartbeat intervals without a
 * heartbeat misses one (the half interval absorbs batching and clock jitter). A hive silent
 * for that long was disconnected, and owes its next heartbeat from when it reappears.
 */
const HEARTBEAT_SLACK = 1.5;

interface HiveState {
  /** seq → packets key of every batch seen. */
  seen: Map<number, string>;
  maxSeq: number;
  contiguous: number;
  lastAck: number;
  lastSensed: Map<string, number>;
  /** Since when the hive owes a heartbeat: its last heartbeat, or when it (re)appeared. */
  heartbeatDueFrom: number | null;
  /** Time of its last message of any kind (a long silence is a disconnection, not a missed heartbeat). */
  lastSeen: number | null;
  /** The current stretch without heartbeats is already reported. */
  heartbeatReported: boolean;
}

/** What the checker's handlers share: the capture's hives, the options, each hive's state and the counts. */
interface CheckerState {
  readonly tolerance: number;
  readonly heartbeatLimitMs: number;
  /** The capture's hives (serial → their sensors' MACs). */
  readonly sensorsOf: ReadonlyMap<string, ReadonlySet<string>>;
  readonly hives: Map<string, HiveState>;
  readonly counts: ReturnType<Checker['counts']>;
}

type Report = (field: string, rule: Rule, message: string) => void;

/** A message of one topic kind, from the hive `serial` its topic names. */
type Handler = (c: CheckerState, m: CapturedMessage, serial: string, v: Report) => void;

/**
 * One entry per hive topic kind (core/topics.ts): its checks, and what it does to the heartbeat
 * rule (a heartbeat pays what the hive owes; an uplink owes one; an ack is the cloud's, not the hive's).
 */
const KINDS: {
  readonly [K in HiveTopicKind]: { readonly heartbeat: 'sent' | 'owed' | null; readonly check: Handler };
} = {
  uplink: { heartbeat: 'owed', check: checkUplink },
  ack: { heartbeat: null, check: checkAck },
  heartbeat: { heartbeat: 'sent', check: checkHeartbeat },
};

export function createChecker(header: Pick<CaptureHeader, 'hives'>, opts: CheckerOptions = {}): Checker {
  const c: CheckerState = {
    tolerance: opts.skewToleranceMs ?? CLOCK_SKEW_TOLERANCE_MS,
    heartbeatLimitMs: (opts.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS) * HEARTBEAT_SLACK,
    sensorsOf: new Map(header.hives.map((h) => [h.serial, new Set(h.sensors)])),
    hives: new Map(),
    counts: { messages: 0, uplinks: 0, acks: 0, heartbeats: 0, retransmissions: 0 },
  };
  return { check: (m) => checkMessage(c, m), finish: () => unfilledGaps(c), counts: () => ({ ...c.counts }) };
}

function checkMessage(c: CheckerState, m: CapturedMessage): Violation[] {
  c.counts.messages++;
  const out: Violation[] = [];
  const v: Report = (field, rule, message) => void out.push({ index: m.i, topic: m.topic, field, rule, message });
  const parsed = parseHiveTopic(m.topic);
  if (!parsed) {
    v('topic', 'topic', `not an occusim/v1 hive topic`);
    return out;
  }
  if (!c.sensorsOf.has(parsed.serial)) v('topic', 'topic', `unknown hive serial ${parsed.serial}`);
  const kind = KINDS[parsed.kind];
  if (kind.heartbeat !== null) heartbeatDue(c, m, parsed.serial, kind.heartbeat === 'sent', v);
  kind.check(c, m, parsed.serial, v);
  return out;
}

function state(c: CheckerState, serial: string): HiveState {
  let s = c.hives.get(serial);
  if (!s)
    c.hives.set(
      serial,
      (s = {
        seen: new Map(),
        maxSeq: 0,
        contiguous: 0,
        lastAck: 0,
        lastSensed: new Map(),
        heartbeatDueFrom: null,
        lastSeen: null,
        heartbeatReported: false,
      }),
    );
  return s;
}

function checkUplink(c: CheckerState, m: CapturedMessage, serial: string, v: Report): void {
  c.counts.uplinks++;
  if (m.payload.length > MAX_PAYLOAD_BYTES)
    v('payload', 'limits', `payload of ${m.payload.length} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
  const b = rawUplink(m.payload);
  if (typeof b === 'string') return v('payload', 'decode', b);
  if (b.hiveSerial === '') v('hive_serial', 'required', 'hive_serial is missing');
  else if (b.hiveSerial !== serial)
    v('hive_serial', 'required', `hive_serial ${b.hiveSerial} does not match the topic's ${serial}`);
  if (b.sentAtMs <= 0) v('sent_at_ms', 'required', 'sent_at_ms is missing');
  if (b.packets.length > MAX_PACKETS_PER_BATCH)
    v('packets', 'limits', `${b.packets.length} packets exceed ${MAX_PACKETS_PER_BATCH} per batch`);
  b.packets.forEach((p, k) => checkPacket(c, p, k, b, serial, v));
  if (b.seq < 1) return v('seq', 'required', 'seq is missing (sequences start at 1)');
  checkSequence(c, b, state(c, serial), v);
}

function checkPacket(
  c: CheckerState,
  p: RawUplinkFields['packets'][number],
  k: number,
  b: RawUplinkFields,
  serial: string,
  v: Report,
): void {
  const { sensorsOf, tolerance } = c;
  const at = `packets[${k}]`;
  if (p.sensorMac === '') v(`${at}.sensor_mac`, 'required', 'sensor_mac is missing');
  else if (sensorsOf.has(serial) && !sensorsOf.get(serial)?.has(p.sensorMac))
    v(`${at}.sensor_mac`, 'known-sensor', `sensor ${p.sensorMac} is not attached to hive ${serial}`);
  if (p.sensedAtMs <= 0) v(`${at}.sensed_at_ms`, 'required', 'sensed_at_ms is missing');
  if (p.body === undefined) v(`${at}.body`, 'required', 'neither presence nor traffic is set');
  if (b.sentAtMs > 0 && p.sensedAtMs > b.sentAtMs + tolerance) {
    v(
      `${at}.sensed_at_ms`,
      'timestamp',
      `sensed ${p.sensedAtMs - b.sentAtMs} ms after the batch was sent (tolerance ${tolerance} ms)`,
    );
  }
}

function checkSequence(c: CheckerState, b: RawUplinkFields, s: HiveState, v: Report): void {
  const key = packetsKey(b.packets);
  const before = s.seen.get(b.seq);
  if (before !== undefined) {
    c.counts.retransmissions++;
    // A retransmission repeats the batch; an emptied batch is the tombstone of a buffer overflow.
    if (before !== key && b.packets.length > 0)
      v('packets', 'retransmission', `seq ${b.seq} repeated with different packets`);
    return;
  }
  // A new seq below the highest fills a gap (a batch lost before the broker, retransmitted): allowed.
  // Its readings are older than the batches after it by construction (a hive with several
  // batches in flight resends the lost one after them), so "sensing times do not go back"
  // (protocol.md section 2) holds in seq order and is checked only for a seq past the highest.
  const fillsGap = b.seq < s.maxSeq;
  s.seen.set(b.seq, key);
  s.maxSeq = Math.max(s.maxSeq, b.seq);
  while (s.seen.has(s.contiguous + 1)) s.contiguous++;
  b.packets.forEach((p, k) => {
    const last = s.lastSensed.get(p.sensorMac);
    if (!fillsGap && last !== undefined && p.sensedAtMs < last - c.tolerance) {
      v(
        `packets[${k}].sensed_at_ms`,
        'timestamp',
        `sensor ${p.sensorMac} went back ${last - p.sensedAtMs} ms in sensing time (tolerance ${c.tolerance} ms)`,
      );
    }
    s.lastSensed.set(p.sensorMac, Math.max(last ?? 0, p.sensedAtMs));
  });
}

function checkAck(c: CheckerState, m: CapturedMessage, serial: string, v: Report): void {
  c.counts.acks++;
  const a = rawDecode<RawAckFields>('UplinkAck', m.payload);
  if (typeof a === 'string') return v('payload', 'decode', a);
  if (a.hiveSerial !== serial)
    v('hive_serial', 'ack', `ack for ${a.hiveSerial || '(missing)'} on the topic of ${serial}`);
  const s = state(c, serial);
  if (a.ackedSeq > s.contiguous)
    v('acked_seq', 'ack', `acks seq ${a.ackedSeq} but the highest contiguous seq received is ${s.contiguous}`);
  if (a.ackedSeq < s.lastAck) v('acked_seq', 'ack', `ack went back from ${s.lastAck} to ${a.ackedSeq}`);
  s.lastAck = Math.max(s.lastAck, a.ackedSeq);
}

function checkHeartbeat(c: CheckerState, m: CapturedMessage, serial: string, v: Report): void {
  c.counts.heartbeats++;
  if (m.payload.length > MAX_HEARTBEAT_BYTES)
    v('payload', 'limits', `heartbeat of ${m.payload.length} bytes exceeds ${MAX_HEARTBEAT_BYTES}`);
  const h = rawDecode<RawHeartbeatFields>('HiveHeartbeat', m.payload);
  if (typeof h === 'string') return v('payload', 'decode', h);
  if (h.hiveSerial !== serial)
    v('hive_serial', 'heartbeat', `hive_serial ${h.hiveSerial || '(missing)'} does not match the topic's ${serial}`);
  if (h.sentAtMs <= 0) v('sent_at_ms', 'heartbeat', 'sent_at_ms is missing');
  if (h.firmwareVersion === '') v('firmware_version', 'heartbeat', 'firmware_version is missing');
  if (h.state === 0) v('state', 'heartbeat', 'state is unspecified');
}

/** The heartbeat rule, judged as each hive message arrives (t: capture time or wall time). */
function heartbeatDue(c: CheckerState, m: CapturedMessage, serial: string, isHeartbeat: boolean, v: Report): void {
  const { heartbeatLimitMs } = c;
  const s = state(c, serial);
  if (s.lastSeen === null || m.t - s.lastSeen > heartbeatLimitMs) {
    s.heartbeatDueFrom = m.t;
    s.heartbeatReported = false;
  }
  s.lastSeen = m.t;
  if (isHeartbeat) {
    s.heartbeatDueFrom = m.t;
    s.heartbeatReported = false;
    return;
  }
  const since = s.heartbeatDueFrom ?? m.t;
  if (!s.heartbeatReported && m.t - since > heartbeatLimitMs) {
    s.heartbeatReported = true;
    v(
      'heartbeat',
      'heartbeat',
      `no heartbeat for ${Math.round((m.t - since) / 1000)} s while publishing (hives send one every ${Math.round(heartbeatLimitMs / HEARTBEAT_SLACK / 1000)} s)`,
    );
  }
}

/** Gaps never filled, one violation per gap with its range (a device that skips 41 seqs has one bug, not 41). */
function unfilledGaps(c: CheckerState): Violation[] {
  const out: Violation[] = [];
  for (const [serial, s] of c.hives) {
    // Only seqs above the contiguous prefix can bound a gap; sorting them is bounded by the messages seen.
    const above = [...s.seen.keys()].filter((q) => q > s.contiguous).sort((a, b) => a - b);
    let prev = s.contiguous;
    for (const q of above) {
      if (q > prev + 1) out.push(gap(serial, prev, q));
      prev = q;
    }
  }
  return out;
}

/** The seqs after `prev` and before `q` never arrived. */
function gap(serial: string, prev: number, q: number): Violation {
  const range =
    q - 1 === prev + 1 ? `seq ${prev + 1} never arrived` : `seqs ${prev + 1}–${q - 1} (${q - 1 - prev}) never arrived`;
  return {
    index: -1,
    topic: `occusim/v1/hives/${serial}/uplink`,
    field: 'seq',
    rule: 'sequence',
    message: `${range} (gap before ${q})`,
  };
}

/** Checks a whole capture: every violation, in message order, then the end-of-capture ones. */
export function checkCapture(
  header: CaptureHeader,
  messages: readonly CapturedMessage[],
  opts: CheckerOptions = {},
): { violations: Violation[]; counts: ReturnType<Checker['counts']> } {
  const c = createChecker(header, opts);
  const violations = messages.flatMap((m) => c.check(m));
  violations.push(...c.finish());
  return { violations, counts: c.counts() };
}

export function formatViolation(v: Violation): string {
  const where = v.index < 0 ? 'end of capture' : `message ${v.index}`;
  return `${where} ${v.topic} ${v.field}: [${v.rule}] ${v.message}`;
}
