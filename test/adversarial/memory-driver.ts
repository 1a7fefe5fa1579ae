import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
/**
 * Drives a platform (broker, ingest, API) with the hostile inputs of issue 16 in a process of
 * its own, started by memory-bound.test.ts with --expose-gc so RSS is this workload's alone,
 * and prints one JSON line: RSS at baseline, its peak while under attack, and after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { VirtualClock } from '../../src/core/clock.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { startPlatform } from '../../src/platform/platform.js';
import { encodeUplink } from '../../src/proto/codec.js';
import { HIVE, HIVE_SERIAL, presenceAt, SENSOR_PA, T0, tinyModel } from '../cloud/fixture.js';
import { announce, connect } from './mqtt-wire.js';

const CLIENT = {
  clientId: 'client_memorytest',
  name: 'memory',
  description: '',
  secret: 'memory-test-secret',
  src: '/clients/0',
};
const AUDIENCE = 'https://api.occusim.local';
const MB = 1024 * 1024;

const step = (what: string): void => void process.stderr.write(`${what} rss=${rss().toFixed(0)}\n`);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const rss = (): number => process.memoryUsage.rss() / MB;
let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, rss())), 10);

async function settle(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  return rss();
}

/** A socket that announces a huge packet and then streams `mb` MiB of it, as fast as the broker takes it. */
function flood(port: number, head: Buffer, mb: number): Promise<void> {
  return new Promise((resolve) => {
    const s = tcpConnect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const done = (): void => {
      s.destroy();
      resolve();
    };
    s.on('error', done);
    s.on('close', done);
    s.on('connect', () => {
      s.write(head);
      const pump = (): void => {
        while (sent < mb * MB) {
          sent += chunk.length;
          if (!s.write(chunk)) return void s.once('drain', pump);
        }
        setTimeout(done, 50);
      };
      pump();
    });
    setTimeout(done, 5000);
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-memory-'));
  const clock = new VirtualClock(T0 + 60_000);
  const model = { ...tinyModel(), clients: [CLIENT] };
  const platform = await startPlatform(
    platformConfig({
      organisations: organisationsFromScenario(model),
      tickMs: model.tickMs,
      store: { kind: 'sqlite', path: join(dir, 'store.sqlite') },
      api: { port: 0, audience: AUDIENCE },
      advanceEveryMs: 20,
    }),
    { clock },
  );
  const port = Number(new URL(platform.brokerUrl).port);
  const api = platform.apiUrl as string;
  const login = await fetch(`${api}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: CLIENT.clientId,
      client_secret: CLIENT.secret,
      audience: AUDIENCE,
    }),
  });
  const token = ((await login.json()) as { access_token: string }).access_token;
  const hive = await connectAsync(platform.brokerUrl, {
    clientId: `hive-${HIVE_SERIAL}`,
    username: HIVE_SERIAL,
    password: HIVE.password,
    reconnectPeriod: 0,
  });
  // Warm-up: every path once, so the baseline holds what any served platform holds.
  await hive.publishAsync(
    uplinkTopic(HIVE_SERIAL),
    Buffer.from(
      encodeUplink({
        hiveSerial: HIVE_SERIAL,
        seq: 1,
        sentAtMs: clock.now(),
        packets: [presenceAt(SENSOR_PA, T0, [[7, 5]])],
      }),
    ),
    { qos: 1 },
  );
  await fetch(`${api}/api/v3/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ sensors { data { id name } } }' }),
  });
  const baseline = await settle();
  step('baseline');
  peak = baseline;

  // Broker: three unauthenticated CONNECTs announcing 255 MiB, and an authenticated PUBLISH announcing 200 MiB, each streaming 32 MiB.
  const authed = connect({ clientId: '', username: HIVE_SERIAL, password: HIVE.password });
  await Promise.all([
    flood(port, announce(0x10, 255 * MB), 32),
    flood(port, announce(0x10, 255 * MB), 32),
    flood(port, announce(0x10, 255 * MB), 32),
    flood(port, Buffer.concat([authed, announce(0x32, 200 * MB)]), 32),
  ]);

  step('broker flood');
  // Ingest: 100 batches of 500 packets spread over the minutes of the next 8 hours (open minutes).
  for (let seq = 2; seq < 102; seq++) {
    const packets = Array.from({ length: 500 }, (_, k) =>
      presenceAt(SENSOR_PA, T0 + ((seq * 500 + k) % 480) * 60_000, [
        [7, 5],
        [8, 5],
      ]),
    );
    await hive.publishAsync(
      uplinkTopic(HIVE_SERIAL),
      Buffer.from(encodeUplink({ hiveSerial: HIVE_SERIAL, seq, sentAtMs: clock.now(), packets })),
      { qos: 1 },
    );
  }
  step('ingest');
  // The platform's clock moves on; its own ticker finalises the open minutes.
  for (let h = 1; h <= 9; h++) {
    clock.advanceTo(T0 + h * 3_600_000);
    await new Promise((r) => setTimeout(r, 60));
  }

  step('minutes');
  // API: amplification, bodies at the limit, deep JSON, 200 times.
  const amplify = `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: sensors { data { id name mac_address hive_serial floor_id room_id mode model center height orientation field_of_view } }`).join(' ')} }`;
  const bodies = [
    JSON.stringify({ query: amplify }),
    JSON.stringify({ query: `{ sites { data { id } } } #${'x'.repeat(1_000_000)}` }),
    `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    JSON.stringify({ query: '{ sites { data { id } } }', variables: { a: 'y'.repeat(900_000) } }),
  ];
  for (let i = 0; i < 200; i++) {
    await fetch(`${api}/api/v3/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: bodies[i % bodies.length] as string,
    }).then((r) => r.arrayBuffer());
  }
  step('api');
  const peakUnderAttack = peak;
  const after = await settle();
  clearInterval(sampler);
  const counters = await platform.reads.counters();
  await hive.endAsync();
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    `${JSON.stringify({ baselineMb: baseline, peakMb: peakUnderAttack, afterMb: after, batches: counters.batchesReceived, packets: counters.packetsProcessed, deadLettered: counters.deadLettered })}\n`,
  );
}

await main();
