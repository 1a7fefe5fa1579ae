import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeCapture } from '../../src/capture/format.js';
import { startRecording } from '../../src/capture/recorder.js';
import { ackTopic, uplinkTopic } from '../../src/core/topics.js';
import { decodeAck, decodeUplink, encodeAck, encodeUplink } from '../../src/proto/codec.js';
import { runScenario } from '../../src/run/run-scenario.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * `run --record` at `--speed max` is a deterministic data source too: the capture's stamps are
 * the platform's time (the delivery's instant), not the simulator's clock, which runs ahead of
 * the deliveries by however far the frame workers and the event loop let it.
 */
// Three hives publishing concurrently: the order between them is the sockets', the capture's is canonical.
const OFFICE_DAY = new URL('../../scenarios/office-day.yaml', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'occusim-recorder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function record(name: string, workers: number): Promise<Buffer> {
  const path = join(dir, `${name}.occap`);
  await runScenario(OFFICE_DAY, { fidelity: 'frame', workers, durationMs: 6 * 60_000, record: path, keepStore: false });
  return readFileSync(path);
}

describe('capture recording', () => {
  it('gives the same bytes run after run at frame fidelity, with 2 frame workers or none', async () => {
    const a = await record('a', 2);
    const b = await record('b', 2);
    const c = await record('c', 0);
    expect(b.equals(a)).toBe(true);
    expect(c.equals(a)).toBe(true);

    // The stamps mean something: an uplink is accepted at the instant its hive sent it, and
    // its ack at the instant the platform acknowledged it.
    const { messages } = decodeCapture(a);
    let uplinks = 0;
    let acks = 0;
    for (const m of messages) {
      if (m.topic.endsWith('/uplink')) {
        expect(m.t).toBe(decodeUplink(m.payload).sentAtMs);
        uplinks++;
      } else if (m.topic.endsWith('/ack')) {
        expect(m.t).toBe(decodeAck(m.payload).ackedAtMs);
        acks++;
      }
    }
    expect(uplinks).toBeGreaterThan(60);
    expect(new Set(messages.map((m) => m.topic.split('/')[3])).size).toBe(3);
    expect(acks).toBe(uplinks);
  }, 120_000);

  it('writes the messages of one instant hive by hive, each hive in the order accepted, whatever the interleaving between hives', () => {
    const model = {
      name: 'two hives',
      seed: 1,
      startMs: 1_000,
      hives: [
        { id: 'a', serial: 'HVAAAAAAAAAA' },
        { id: 'b', serial: 'HVBBBBBBBBBB' },
      ],
      sensors: [],
    } as unknown as ScenarioModel;
    const uplink = (serial: string, seq: number, t: number): [string, Buffer] => [
      uplinkTopic(serial),
      Buffer.from(encodeUplink({ hiveSerial: serial, seq, sentAtMs: t, packets: [] })),
    ];
    const ack = (serial: string, seq: number, t: number): [string, Buffer] => [
      ackTopic(serial),
      Buffer.from(encodeAck({ hiveSerial: serial, ackedSeq: seq, ackedAtMs: t })),
    ];
    const [A, B] = ['HVAAAAAAAAAA', 'HVBBBBBBBBBB'];
    const orders = [
      [
        uplink(B, 1, 10_000),
        uplink(A, 1, 10_000),
        ack(B, 1, 10_000),
        ack(A, 1, 10_000),
        uplink(A, 2, 10_000),
        ack(A, 2, 10_000),
        uplink(A, 3, 20_000),
      ],
      [
        uplink(A, 1, 10_000),
        ack(A, 1, 10_000),
        uplink(A, 2, 10_000),
        ack(A, 2, 10_000),
        uplink(B, 1, 10_000),
        ack(B, 1, 10_000),
        uplink(A, 3, 20_000),
      ],
    ];
    const bytes = orders.map((order, k) => {
      const path = join(dir, `unit-${k}.occap`);
      const r = startRecording(path, model);
      // The platform's clock at acceptance: not what the capture is stamped with (the senders' instants are).
      for (const [topic, payload] of order) r.onPublish(topic, payload, 99_000 + k);
      expect(r.count).toBe(order.length);
      r.close();
      return readFileSync(path);
    });
    expect(bytes[1]!.equals(bytes[0]!)).toBe(true);
    const { messages } = decodeCapture(bytes[0]!);
    expect(messages.map((m) => `${m.t} ${m.topic.split('/')[3]}/${m.topic.split('/')[4]}`)).toEqual([
      `10000 ${A}/uplink`,
      `10000 ${A}/ack`,
      `10000 ${A}/uplink`,
      `10000 ${A}/ack`,
      `10000 ${B}/uplink`,
      `10000 ${B}/ack`,
      `20000 ${A}/uplink`,
    ]);
  });
});
