import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkCapture } from '../../src/capture/check.js';
import {
  decodeCapture,
  encodeCapture,
  readCapture,
  type CapturedMessage,
  type CaptureHeader,
} from '../../src/capture/format.js';
import { RULES, type Rule } from '../../src/capture/rules.js';
import { main } from '../../src/cli/main.js';
import { isAppError } from '../../src/core/errors.js';
import { decodeUplink, encodeAck, encodeHeartbeat, encodeUplink, decodeHeartbeat } from '../../src/proto/codec.js';
import type { UplinkBatch } from '../../src/proto/messages.js';
import { runScenario } from '../../src/run/run-scenario.js';

const SCENARIOS = new URL('../../scenarios/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'occusim-capture-'));
const captures: Record<string, string> = {
  quickstart: join(dir, 'quickstart.occap'),
  outage: join(dir, 'outage.occap'),
};

let header: CaptureHeader;
let messages: CapturedMessage[];

beforeAll(async () => {
  await runScenario(`${SCENARIOS}quickstart.yaml`, { durationMs: 15 * 60_000, record: captures.quickstart! });
  await runScenario(`${SCENARIOS}hive-outage.yaml`, { durationMs: 40 * 60_000, record: captures.outage! });
  ({ header, messages } = readCapture(captures.quickstart!));
});

const uplinks = () => messages.filter((m) => m.topic.endsWith('/uplink'));
const firstUplinkWithPackets = () => uplinks().find((m) => decodeUplink(m.payload).packets.length > 0)!;

/** A copy of the quickstart capture with message `index` replaced (or removed, for null). */
function corrupt(
  index: number,
  replacement: Partial<CapturedMessage> | null,
  extra: CapturedMessage[] = [],
): CapturedMessage[] {
  const out: CapturedMessage[] = [];
  for (const m of messages) {
    if (m.i === index && replacement === null) continue;
    out.push(m.i === index ? { ...m, ...replacement } : m);
    if (m.i === index) out.push(...extra);
  }
  return out.map((m, i) => ({ ...m, i }));
}

function violationsOf(ms: CapturedMessage[], rule: Rule) {
  return checkCapture(header, ms).violations.filter((v) => v.rule === rule);
}

function withBatch(m: CapturedMessage, change: (b: UplinkBatch) => UplinkBatch): Partial<CapturedMessage> {
  return { payload: encodeUplink(change(decodeUplink(m.payload))) };
}

describe('occusim check on recorded captures', () => {
  it('accepts every capture the simulator records, heartbeats and the outage included', () => {
    for (const file of Object.values(captures)) {
      const c = readCapture(file);
      const r = checkCapture(c.header, c.messages);
      expect(r.violations).toEqual([]);
      expect(r.counts.uplinks).toBeGreaterThan(50);
      expect(r.counts.acks).toBe(r.counts.uplinks);
      expect(r.counts.heartbeats).toBeGreaterThan(5);
    }
    expect(header.protocol).toBe('occusim.v1');
  });

  it('records byte-identical captures for the same seed', async () => {
    const again = join(dir, 'again.occap');
    await runScenario(`${SCENARIOS}quickstart.yaml`, { durationMs: 15 * 60_000, record: again });
    expect(readFileSync(again).equals(readFileSync(captures.quickstart!))).toBe(true);
  });

  it('has a test for every rule below', () => {
    expect(RULES.length).toBe(10);
  });

  it('rule topic: a message on a topic of no known hive', () => {
    const m = firstUplinkWithPackets();
    const v = violationsOf(corrupt(m.i, { topic: 'occusim/v1/hives/HVNOBODY/uplink' }), 'topic');
    expect(v[0]).toMatchObject({ index: m.i, field: 'topic' });
  });

  it('rule decode: a payload that is not a HiveUplink', () => {
    const m = firstUplinkWithPackets();
    expect(
      violationsOf(corrupt(m.i, { payload: Uint8Array.from([0x0a, 0xff, 0xff, 0xff]) }), 'decode')[0],
    ).toMatchObject({ index: m.i, field: 'payload' });
  });

  it('rule required: a batch without its hive serial', () => {
    const m = firstUplinkWithPackets();
    expect(
      violationsOf(
        corrupt(
          m.i,
          withBatch(m, (b) => ({ ...b, hiveSerial: '' })),
        ),
        'required',
      )[0],
    ).toMatchObject({ index: m.i, field: 'hive_serial' });
  });

  it('rule known-sensor: a packet from a sensor the hive does not have', () => {
    const m = firstUplinkWithPackets();
    const bad = corrupt(
      m.i,
      withBatch(m, (b) => ({
        ...b,
        packets: [{ ...b.packets[0]!, sensorMac: '00-17-0d-00-00-ff-ff-ff' }, ...b.packets.slice(1)],
      })),
    );
    expect(violationsOf(bad, 'known-sensor')[0]).toMatchObject({ index: m.i, field: 'packets[0].sensor_mac' });
  });

  it('rule sequence: a batch that never arrives leaves a gap', () => {
    const m = uplinks()[3]!;
    const v = violationsOf(corrupt(m.i, null), 'sequence');
    expect(v[0]?.message).toMatch(new RegExp(`seq ${decodeUplink(m.payload).seq} never arrived`));
  });

  it('rule sequence: a gap of many batches is one violation naming its range', () => {
    const gone = new Set(
      uplinks()
        .slice(3, 44)
        .map((m) => m.i),
    );
    const seqs = uplinks()
      .slice(3, 44)
      .map((m) => decodeUplink(m.payload).seq);
    const kept = messages.filter((m) => !gone.has(m.i) && !m.topic.endsWith('/ack')).map((m, i) => ({ ...m, i }));
    const v = violationsOf(kept, 'sequence');
    expect(v).toHaveLength(1);
    expect(v[0]?.message).toBe(`seqs ${seqs[0]}–${seqs[40]} (41) never arrived (gap before ${seqs[40]! + 1})`);
  });

  it('rule sequence: a huge seq costs no more than the messages received (no loop over the gap)', () => {
    const m = uplinks()[0]!;
    const far = corrupt(
      m.i,
      withBatch(m, (b) => ({ ...b, seq: 2 ** 52 })),
    );
    const t0 = performance.now();
    expect(violationsOf(far, 'sequence').length).toBeLessThan(3);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('rule heartbeat: a hive that keeps publishing without heartbeats is flagged once per silent stretch', () => {
    const noHeartbeats = messages.filter((m) => !m.topic.endsWith('/heartbeat')).map((m, i) => ({ ...m, i }));
    const v = violationsOf(noHeartbeats, 'heartbeat');
    expect(v).toHaveLength(1);
    expect(v[0]?.message).toMatch(/no heartbeat for \d+ s while publishing \(hives send one every 60 s\)/);
  });

  it('rule retransmission: a repeated seq with different packets', () => {
    const m = firstUplinkWithPackets();
    const changed = withBatch(m, (b) => ({ ...b, packets: b.packets.slice(1) }));
    const v = violationsOf(corrupt(m.i, {}, [{ ...m, ...changed }]), 'retransmission');
    expect(v[0]).toMatchObject({ index: m.i + 1, field: 'packets' });
  });

  it('rule retransmission: an identical repeat is recognised as a retransmission, not a violation', () => {
    const m = firstUplinkWithPackets();
    const r = checkCapture(header, corrupt(m.i, {}, [{ ...m }]));
    expect(r.violations.filter((v) => v.rule !== 'ack')).toEqual([]);
    expect(r.counts.retransmissions).toBe(1);
  });

  it('rule timestamp: a sensing time far beyond the send time', () => {
    const m = firstUplinkWithPackets();
    const bad = corrupt(
      m.i,
      withBatch(m, (b) => ({ ...b, packets: [{ ...b.packets[0]!, sensedAtMs: b.sentAtMs + 60_000 }] })),
    );
    expect(violationsOf(bad, 'timestamp')[0]).toMatchObject({ index: m.i, field: 'packets[0].sensed_at_ms' });
  });

  it('rule timestamp: a new batch whose readings go back in sensing time', () => {
    const [a, b] = uplinks().filter((m) => decodeUplink(m.payload).packets.length > 0);
    const earlier = decodeUplink(a!.payload).packets[0]!.sensedAtMs - 60_000;
    const bad = corrupt(
      b!.i,
      withBatch(b!, (x) => ({ ...x, packets: x.packets.map((p) => ({ ...p, sensedAtMs: earlier })) })),
    );
    expect(violationsOf(bad, 'timestamp')[0]?.message).toMatch(/went back \d+ ms in sensing time/);
  });

  it('rule timestamp: a batch lost before the broker and resent after newer ones is not going back', () => {
    // A hive with several batches in flight resends the lost one after them (protocol.md §6).
    const withPackets = uplinks().filter((m) => decodeUplink(m.payload).packets.length > 0);
    const lost = withPackets[2]!;
    const resentAfter = withPackets[6]!;
    const reordered = messages
      .filter((m) => !m.topic.endsWith('/ack') && m.i !== lost.i)
      .flatMap((m) => (m.i === resentAfter.i ? [m, lost] : [m]))
      .map((m, i) => ({ ...m, i }));
    expect(checkCapture(header, reordered).violations).toEqual([]);
  });

  it('rule limits: a batch of more than 500 packets', () => {
    const m = firstUplinkWithPackets();
    const bad = corrupt(
      m.i,
      withBatch(m, (b) => ({ ...b, packets: Array.from({ length: 501 }, () => b.packets[0]!) })),
    );
    expect(violationsOf(bad, 'limits')[0]).toMatchObject({ index: m.i, field: 'packets' });
  });

  it('rule ack: an ack for a batch the cloud has not received', () => {
    const a = messages.find((m) => m.topic.endsWith('/ack'))!;
    const bad = corrupt(a.i, {
      payload: encodeAck({ hiveSerial: header.hives[0]!.serial, ackedSeq: 99, ackedAtMs: a.t }),
    });
    expect(violationsOf(bad, 'ack')[0]).toMatchObject({ index: a.i, field: 'acked_seq' });
  });

  it('rule heartbeat: a heartbeat without its firmware version', () => {
    const h = messages.find((m) => m.topic.endsWith('/heartbeat'))!;
    const bad = corrupt(h.i, { payload: encodeHeartbeat({ ...decodeHeartbeat(h.payload), firmwareVersion: '' }) });
    expect(violationsOf(bad, 'heartbeat')[0]).toMatchObject({ index: h.i, field: 'firmware_version' });
  });

  it('exits 1 on a corrupted capture, printing index, topic, field and rule', async () => {
    const m = firstUplinkWithPackets();
    const file = join(dir, 'bad.occap');
    writeFileSync(file, encodeCapture(header, corrupt(m.i, { payload: Uint8Array.from([0xff]) })));
    const out: string[] = [];
    const io = {
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => out.push(s) },
    } as never;
    expect(await main(['check', file], io)).toBe(1);
    expect(out.join('')).toMatch(new RegExp(`message ${m.i} occusim/v1/hives/\\w+/uplink payload: \\[decode\\]`));
  });

  it('gives a located error, never a stack trace, for a truncated or foreign file', async () => {
    const bytes = readFileSync(captures.quickstart!);
    const cut = bytes.subarray(0, Math.floor(bytes.length / 2));
    const err = (() => {
      try {
        decodeCapture(cut, 'cut.occap');
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(isAppError(err, 'CAPTURE_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(/^cut\.occap: byte \d+: truncated message \d+/);
    const file = join(dir, 'foreign.occap');
    writeFileSync(file, 'hello');
    const out: string[] = [];
    const io = {
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => out.push(s) },
    } as never;
    expect(await main(['check', file], io)).toBe(2);
    expect(out.join('')).toMatch(/byte 0: not an occusim capture/);
    expect(out.join('')).not.toMatch(/at .*\.ts:\d+/);
  });
});
