import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { ackTopic, heartbeatTopic, uplinkTopic } from '../../src/core/topics.js';
import { startPlatform, type Platform } from '../../src/platform/platform.js';
import { decodeAck, encodeUplink } from '../../src/proto/codec.js';
import type { WirePacket } from '../../src/proto/messages.js';
import {
  HIVE,
  HIVE_SERIAL,
  presenceAt,
  SENSOR_PA,
  SENSOR_PB,
  SENSOR_T,
  T0,
  tinyModel,
  trafficAt,
} from '../cloud/fixture.js';
import { cases, limitMs, report, SEED } from './budget.js';
import { announce, connect, DISCONNECT, MALFORMED_LENGTH, PINGREQ, publish, subscribe } from './mqtt-wire.js';

/**
 * MQTT fuzz against the embedded broker and the cloud's ingest (issue 16, findings 2, 3, 6):
 * - payloads: a hive publishes valid batches, replays, and batches mutated byte by byte
 *   (flipped, cut, padded, random, wrong serial, too many packets, times far off);
 * - packets: raw sockets send bytes no client library would (random bytes, CONNECTs of
 *   other protocol levels or wrong passwords, PUBLISH with packet id 0 or retain, lengths
 *   announcing megabytes, malformed lengths, subscriptions to '#').
 * The ledger at the end: every uplink the broker accepted reached the cloud, and each was
 * stored or re-acked as a duplicate (one ack each) or dead-lettered with a reason; the broker
 * and the ingest still serve a well-behaved hive afterwards.
 */
const NOW = T0 + 5 * 60_000;
let dir: string;
let platform: Platform;
let port: number;
const accepted = { uplink: 0, heartbeat: 0, other: 0 };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'occusim-mqtt-fuzz-'));
  const model = tinyModel();
  platform = await startPlatform(
    platformConfig({
      organisations: organisationsFromScenario(model),
      tickMs: model.tickMs,
      store: { kind: 'sqlite', path: join(dir, 'store.sqlite') },
    }),
    {
      clock: new VirtualClock(NOW),
      onPublish: (topic) => {
        if (topic === uplinkTopic(HIVE_SERIAL)) accepted.uplink++;
        else if (topic === heartbeatTopic(HIVE_SERIAL)) accepted.heartbeat++;
        else accepted.other++;
      },
    },
  );
  port = Number(new URL(platform.brokerUrl).port);
});

afterAll(async () => {
  await platform?.close();
  rmSync(dir, { recursive: true, force: true });
});

function packets(seq: number, n: number): WirePacket[] {
  return Array.from({ length: n }, (_, k) => {
    const at = T0 + ((seq * 7 + k) % 300) * 1000;
    return k % 3 === 2 ? trafficAt(SENSOR_T, at, 1, 0) : presenceAt(k % 2 ? SENSOR_PB : SENSOR_PA, at, [[7, 5]]);
  });
}

const valid = (seq: number, n = 2): Buffer =>
  Buffer.from(encodeUplink({ hiveSerial: HIVE_SERIAL, seq, sentAtMs: NOW, packets: packets(seq, n) }));

type PayloadCase =
  | { kind: 'valid' | 'replay' | 'wrong-serial' | 'too-many' | 'far-times' | 'empty' }
  | { kind: 'flip'; at: number[]; bytes: number[] }
  | { kind: 'cut'; at: number }
  | { kind: 'pad'; bytes: number[] }
  | { kind: 'random'; bytes: number[] }
  | { kind: 'heartbeat'; bytes: number[] };

const bytes = (max: number) => fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: max });
const payloadCase: fc.Arbitrary<PayloadCase> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'replay' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('flip' as const),
      at: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
      bytes: bytes(4),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pad' as const), bytes: bytes(64) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('random' as const), bytes: bytes(256) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heartbeat' as const), bytes: bytes(128) }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { kind: 'wrong-serial' as const },
      { kind: 'too-many' as const },
      { kind: 'far-times' as const },
      { kind: 'empty' as const },
    ),
  },
);

/** The topic and bytes of case i (seq i + 1 for every fresh batch, so the fresh ones never collide). */
function payloadOf(c: PayloadCase, i: number, sentValid: number[]): { topic: string; payload: Buffer } {
  const seq = i + 1;
  const up = uplinkTopic(HIVE_SERIAL);
  switch (c.kind) {
    case 'valid':
      sentValid.push(seq);
      return { topic: up, payload: valid(seq) };
    case 'replay': {
      const earlier = sentValid[i % Math.max(1, sentValid.length)];
      return { topic: up, payload: valid(earlier ?? seq) };
    }
    case 'flip': {
      const b = valid(seq);
      c.at.forEach((at, k) => (b[at % b.length] = c.bytes[k % c.bytes.length] as number));
      return { topic: up, payload: b };
    }
    case 'cut':
      return { topic: up, payload: valid(seq).subarray(0, c.at % 40) };
    case 'pad':
      return { topic: up, payload: Buffer.concat([valid(seq), Buffer.from(c.bytes)]) };
    case 'random':
      return { topic: up, payload: Buffer.from(c.bytes) };
    case 'heartbeat':
      return { topic: heartbeatTopic(HIVE_SERIAL), payload: Buffer.from(c.bytes) };
    case 'wrong-serial':
      return {
        topic: up,
        payload: Buffer.from(
          encodeUplink({ hiveSerial: 'HV9999999999', seq, sentAtMs: NOW, packets: packets(seq, 1) }),
        ),
      };
    case 'too-many':
      return { topic: up, payload: valid(seq, 501) };
    case 'far-times':
      return {
        topic: up,
        payload: Buffer.from(
          encodeUplink({
            hiveSerial: HIVE_SERIAL,
            seq,
            sentAtMs: NOW,
            packets: [presenceAt(SENSOR_PA, NOW + 400 * 86_400_000, [[7, 5]]), presenceAt(SENSOR_PA, -1, [[7, 5]])],
          }),
        ),
      };
    case 'empty':
      return { topic: up, payload: Buffer.alloc(0) };
  }
}

type RawCase =
  | { kind: 'random'; bytes: number[] }
  | {
      kind: 'connect';
      level: number;
      name: string;
      password: string;
      reserved: boolean;
      clean: boolean;
      clientId: string;
      tail: number[];
    }
  | { kind: 'session'; frames: RawFrame[] }
  | { kind: 'huge-connect'; length: number };

type RawFrame =
  | { f: 'publish'; topic: number; qos: number; pid: number; retain: boolean; payload: number; seq: number }
  | { f: 'subscribe'; filter: number }
  | { f: 'ping' }
  | { f: 'disconnect' }
  | { f: 'announce'; type: number; length: number }
  | { f: 'malformed' }
  | { f: 'garbage'; bytes: number[] };

const rawFrame: fc.Arbitrary<RawFrame> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      f: fc.constant('publish' as const),
      topic: fc.nat(5),
      qos: fc.nat(3),
      pid: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 65535 })),
      retain: fc.boolean(),
      payload: fc.nat(3),
      seq: fc.integer({ min: 1, max: 1_000_000 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ f: fc.constant('subscribe' as const), filter: fc.nat(5) }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom({ f: 'ping' as const }, { f: 'disconnect' as const }, { f: 'malformed' as const }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      f: fc.constant('announce' as const),
      type: fc.constantFrom(0x30, 0x32, 0x82, 0x10, 0xf0),
      length: fc.integer({ min: 300_000, max: 268_435_455 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ f: fc.constant('garbage' as const), bytes: bytes(64) }) },
);

const rawCase: fc.Arbitrary<RawCase> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('random' as const), bytes: bytes(300) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('connect' as const),
      level: fc.constantFrom(3, 4, 5, 0, 255),
      name: fc.constantFrom('MQTT', 'MQIsdp', 'mqtt', ''),
      password: fc.constantFrom(HIVE.password, 'wrong', ''),
      reserved: fc.boolean(),
      clean: fc.boolean(),
      clientId: fc.constantFrom('', 'occusim-cloud', 'fuzz', '\u0000', 'x'.repeat(300)),
      tail: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 16 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('session' as const),
      frames: fc.array(rawFrame, { minLength: 1, maxLength: 6 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge-connect' as const),
      length: fc.integer({ min: 20_000, max: 268_435_455 }),
    }),
  },
);

const TOPICS = [
  uplinkTopic(HIVE_SERIAL),
  heartbeatTopic(HIVE_SERIAL),
  uplinkTopic('HV9999999999'),
  ackTopic(HIVE_SERIAL),
  '$SYS/x',
  'a/b',
];
const FILTERS = [
  '#',
  '$SYS/#',
  'occusim/v1/hives/+/uplink',
  ackTopic('HV9999999999'),
  ackTopic(HIVE_SERIAL),
  '+/+/+/+/+',
];

function rawBytes(c: RawCase): Buffer {
  if (c.kind === 'random') return Buffer.from(c.bytes);
  if (c.kind === 'huge-connect') return announce(0x10, c.length);
  if (c.kind === 'connect') {
    return Buffer.concat([
      connect({
        clientId: c.clientId,
        username: HIVE_SERIAL,
        password: c.password,
        protocolName: c.name,
        level: c.level,
        clean: c.clean,
        reservedFlag: c.reserved,
      }),
      Buffer.from(c.tail),
    ]);
  }
  // An empty id (the broker names it): `hive-{serial}` would take over the fuzz hive's connection.
  const parts = [connect({ clientId: '', username: HIVE_SERIAL, password: HIVE.password })];
  for (const f of c.frames) {
    if (f.f === 'publish') {
      const payload = [valid(f.seq), Buffer.alloc(0), Buffer.from('garbage'), valid(f.seq).subarray(0, 7)][
        f.payload
      ] as Buffer;
      parts.push(publish(TOPICS[f.topic] as string, payload, { qos: f.qos, packetId: f.pid, retain: f.retain }));
    } else if (f.f === 'subscribe') parts.push(subscribe(7, FILTERS[f.filter] as string));
    else if (f.f === 'ping') parts.push(PINGREQ);
    else if (f.f === 'disconnect') parts.push(DISCONNECT);
    else if (f.f === 'malformed') parts.push(MALFORMED_LENGTH);
    else if (f.f === 'announce') parts.push(announce(f.type, f.length));
    else parts.push(Buffer.from(f.bytes));
  }
  return Buffer.concat(parts);
}

/** Sends the bytes, then waits for the broker to close the socket or 40 ms of quiet. */
function sendRaw(data: Buffer): Promise<{ closedByBroker: boolean; received: number }> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    let received = 0;
    let done = false;
    const finish = (closedByBroker: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ closedByBroker, received });
    };
    const timer = setTimeout(() => finish(false), 40);
    socket.on('data', (d: Buffer) => (received += d.length));
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => socket.write(data));
  });
}

async function hive(clientId: string): Promise<{ client: MqttClient; acks: number[] }> {
  const client = await connectAsync(platform.brokerUrl, {
    clientId,
    username: HIVE_SERIAL,
    password: HIVE.password,
    reconnectPeriod: 0,
  });
  const acks: number[] = [];
  client.on('message', (_t, p) => acks.push(decodeAck(p).ackedSeq));
  await client.subscribeAsync(ackTopic(HIVE_SERIAL), { qos: 1 });
  return { client, acks };
}

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const t0 = performance.now();
  while (!(await check())) {
    if (performance.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('MQTT fuzz against the embedded broker and ingest', () => {
  it(
    `keeps a ledger of every uplink over ${cases(8000)} payload and ${cases(2000)} packet cases (seed ${SEED})`,
    async () => {
      const nPayload = cases(8000);
      const nRaw = cases(2000);
      const h = await hive(`hive-${HIVE_SERIAL}`);
      // Payloads, 250 in flight at a time.
      const payloadCases = fc.sample(payloadCase, { seed: SEED, numRuns: nPayload });
      const sentValid: number[] = [];
      const kinds: Record<string, number> = {};
      let maxCaseMs = 0;
      for (let i = 0; i < payloadCases.length; i += 250) {
        const t0 = performance.now();
        await Promise.all(
          payloadCases.slice(i, i + 250).map((c, k) => {
            kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
            const { topic, payload } = payloadOf(c, i + k, sentValid);
            return h.client.publishAsync(topic, payload, { qos: 1 });
          }),
        );
        maxCaseMs = Math.max(maxCaseMs, (performance.now() - t0) / 250);
      }
      // Raw packets, 16 sockets at a time.
      const rawCases = fc.sample(rawCase, { seed: SEED + 1, numRuns: nRaw });
      let closedByBroker = 0;
      for (let i = 0; i < rawCases.length; i += 16) {
        const results = await Promise.all(rawCases.slice(i, i + 16).map((c) => sendRaw(rawBytes(c))));
        closedByBroker += results.filter((r) => r.closedByBroker).length;
      }
      // A well-behaved hive still gets its batch stored and acked: broker and ingest survived.
      const probeSeq = 5_000_000;
      const after = await hive(''); // the broker names it: hive-{serial} would take over the first hive's connection
      await after.client.publishAsync(uplinkTopic(HIVE_SERIAL), valid(probeSeq), { qos: 1 });
      // (Acks carry the highest contiguous seq stored, so the probe's ack is any ack from now on.)
      await until("the probe batch's ack", () => Promise.resolve(after.acks.length > 0));

      // The ledger. Every uplink the broker accepted reached the cloud ...
      await until(
        'the cloud to take every accepted uplink',
        async () => (await platform.reads.counters()).batchesReceived === accepted.uplink,
      );
      const c = await platform.reads.counters();
      const deadLetters = await platform.reads.deadLetters();
      const stored = c.batchesProcessed;
      const duplicates = c.duplicateBatches;
      const refused = c.batchesReceived - stored - duplicates;
      // ... each was stored, re-acked as a duplicate, or dead-lettered whole ...
      expect(refused).toBeGreaterThanOrEqual(0);
      // ... every stored or duplicate batch was acked (acks reach both hives: they share the serial's ack topic) ...
      await until('one ack per stored or duplicate batch', () => Promise.resolve(h.acks.length >= stored + duplicates));
      await new Promise((r) => setTimeout(r, 100));
      expect(h.acks.length).toBe(stored + duplicates);
      // ... and every dead letter is kept with its reason.
      expect(deadLetters.length).toBe(c.deadLettered);
      expect(deadLetters.filter((d) => d.reason.trim() === '')).toEqual([]);
      expect(deadLetters.length).toBeGreaterThanOrEqual(refused);
      // Every unmutated fresh batch was stored; replays were duplicates.
      expect(stored).toBeGreaterThanOrEqual(new Set(sentValid).size);
      expect(duplicates).toBeGreaterThanOrEqual(kinds['replay'] ?? 0);
      report('mqtt', {
        payloadCases: nPayload,
        packetCases: nRaw,
        cases: nPayload + nRaw,
        brokerAcceptedUplinks: accepted.uplink,
        stored,
        duplicates,
        deadLetteredWhole: refused,
        deadLetterRows: deadLetters.length,
        acks: h.acks.length,
        closedByBroker,
        crashes: 0,
        silentDrops: accepted.uplink - c.batchesReceived,
        maxMsPerPayloadCase: maxCaseMs,
      });
      await h.client.endAsync();
      await after.client.endAsync();
    },
    limitMs(120_000),
  );
});
