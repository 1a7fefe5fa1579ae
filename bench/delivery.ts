/**
 * Delivery section (`npm run bench -- delivery`):
 * - mesh + hive: scenarios/hive-outage.yaml's mesh (8 sensors, up to 3 hops, 30 % extra loss
 *   on the far links) and hive (batching, buffer, acks) in sim time, no sockets: packets/s on
 *   one core; baseline = the hive alone (packets handed to it directly), same packets.
 * - broker: uplink messages/s through the embedded Aedes and through Debian's mosquitto
 *   (started here on a free localhost port with a generated config), same client load:
 *   HIVES publishers × MESSAGES QoS-1 uplinks of a real ~2 KB batch, WINDOW in flight each,
 *   one QoS-1 subscriber on occusim/v1/hives/+/uplink; timed until the subscriber has all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { startBroker } from '../src/broker/aedes-broker.js';
import { allHivesFilter, uplinkTopic } from '../src/core/topics.js';
import { HiveNode } from '../src/hive/hive-node.js';
import { UPLINK_PROFILES } from '../src/hive/uplink-profile.js';
import { FaultTimeline } from '../src/mesh/faults.js';
import { MeshSim } from '../src/mesh/mesh.js';
import { encodeUplink } from '../src/proto/codec.js';
import type { WirePacket } from '../src/proto/messages.js';
import { loadScenarioFile } from '../src/scenario/load.js';
import type { ScenarioModel } from '../src/scenario/model.js';
import { DEFAULT_NETWORK } from '../src/scenario/resolve-network.js';

const SIM_S = 4 * 3600;
const HIVES = 4;
const MESSAGES = 2500;
const WINDOW = 32;

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

function packetsOf(model: ScenarioModel): Array<{ sensor: ScenarioModel['sensors'][number]; packet: WirePacket }> {
  const out: Array<{ sensor: ScenarioModel['sensors'][number]; packet: WirePacket }> = [];
  for (let s = 0; s < SIM_S; s++) {
    for (const sensor of model.sensors) {
      out.push({
        sensor,
        packet: {
          kind: 'presence',
          sensorMac: sensor.mac,
          sensedAtMs: model.startMs + s * 1000,
          detections: [[0.4, 0.6]],
        },
      });
    }
  }
  return out;
}

function meshHive(model: ScenarioModel, withMesh: boolean): { packetsPerS: number; wallMs: number; packets: number } {
  const hiveId = model.hives[0]!.id;
  const faults = new FaultTimeline(model.faults);
  const packets = packetsOf(model);
  const t0 = performance.now();
  const mesh = new MeshSim(model, hiveId, DEFAULT_NETWORK.mesh, faults);
  const node = new HiveNode({
    hiveId,
    serial: model.hives[0]!.serial,
    params: DEFAULT_NETWORK.hive,
    profile: UPLINK_PROFILES.ethernet,
    faults: new FaultTimeline([]),
    seed: 1,
    startMs: model.startMs,
    endMs: model.startMs + SIM_S * 1000,
    batchIntervalMs: 10_000,
  });
  let k = 0;
  for (let t = model.startMs + 10_000; t <= model.startMs + SIM_S * 1000; t += 10_000) {
    for (; k < packets.length && packets[k]!.packet.sensedAtMs < t; k++) {
      const p = packets[k]!;
      if (withMesh) mesh.send(p.sensor, p.packet.sensedAtMs, k);
      else node.receive([p.packet]);
    }
    // A frame's item is the packet's index (frames carry numbers, not objects).
    if (withMesh) node.receive(mesh.takeArrived(t).map((a) => packets[a.item]!.packet));
    const sent = node.plan(t);
    const last = sent[sent.length - 1];
    if (last) node.acked(last.seq);
  }
  const wallMs = performance.now() - t0;
  return { packetsPerS: (packets.length / wallMs) * 1000, wallMs, packets: packets.length };
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function startMosquitto(): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'occusim-mosquitto-'));
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_inflight_messages 0\nmax_queued_messages 100000\n`,
  );
  const proc = spawn('/usr/sbin/mosquitto', ['-c', conf], { stdio: 'ignore' });
  const url = `mqtt://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    try {
      const c = await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 500 }, false);
      await c.endAsync();
      return { url, proc };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill();
  throw new Error('mosquitto did not start');
}

async function load(
  url: string,
  hives: ReadonlyArray<{ serial: string; password: string }>,
  cloud: { username: string; password: string },
): Promise<number> {
  const sub = await connectAsync(url, { ...cloud, clientId: 'bench-cloud', clean: true, reconnectPeriod: 0 });
  await sub.subscribeAsync(allHivesFilter('uplink'), { qos: 1 });
  const pubs: MqttClient[] = [];
  for (const h of hives)
    pubs.push(
      await connectAsync(url, {
        username: h.serial,
        password: h.password,
        clientId: `bench-${h.serial}`,
        clean: true,
        reconnectPeriod: 0,
      }),
    );
  const total = hives.length * MESSAGES;
  let received = 0;
  const all = new Promise<void>((resolve) => sub.on('message', () => ++received === total && resolve()));
  const packets: WirePacket[] = Array.from({ length: 40 }, (_, i) => ({
    kind: 'presence',
    sensorMac: `00-17-0d-00-00-00-00-${String(i).padStart(2, '0')}`,
    sensedAtMs: 1e12 + i,
    detections: [
      [0.1, 0.2],
      [0.3, 0.4],
    ],
  }));
  const t0 = performance.now();
  await Promise.all(
    hives.map(async (h, i) => {
      for (let start = 1; start <= MESSAGES; start += WINDOW) {
        const batch = Array.from({ length: Math.min(WINDOW, MESSAGES - start + 1) }, (_, k) =>
          Buffer.from(encodeUplink({ hiveSerial: h.serial, seq: start + k, sentAtMs: 1e12, packets })),
        );
        await Promise.all(batch.map((p) => pubs[i]!.publishAsync(uplinkTopic(h.serial), p, { qos: 1 })));
      }
    }),
  );
  await all;
  const perS = (total / (performance.now() - t0)) * 1000;
  for (const c of [sub, ...pubs]) await c.endAsync();
  return perS;
}

export async function runDeliveryBench(root: string): Promise<void> {
  const loaded = loadScenarioFile(join(root, 'scenarios/hive-outage.yaml'));
  if (!loaded.ok) throw new Error('hive-outage.yaml does not load');
  const model = loaded.model;
  console.log('== delivery: mesh + hive simulation, one core');
  const base = meshHive(model, false);
  const withMesh = meshHive(model, true);
  console.log(`  ${fmt(withMesh.packets)} packets (${model.sensors.length} sensors × ${SIM_S / 3600} h sim)`);
  console.log(
    `  hive alone (baseline)        ${fmt(base.packetsPerS).padStart(11)} packets/s   (${Math.round(base.wallMs)} ms)  1.00`,
  );
  console.log(
    `  mesh + hive                  ${fmt(withMesh.packetsPerS).padStart(11)} packets/s   (${Math.round(withMesh.wallMs)} ms)  ratio ${(withMesh.packetsPerS / base.packetsPerS).toFixed(3)}`,
  );

  console.log(
    `== delivery: uplink messages/s, ${HIVES} hives × ${MESSAGES} QoS-1 uplinks (window ${WINDOW}), one QoS-1 subscriber`,
  );
  const hives = Array.from({ length: HIVES }, (_, i) => ({ serial: `HVBENCH${i}`, password: `pw${i}` }));
  const cloud = { username: 'occusim-cloud', password: 'bench' };
  const aedes = await startBroker({ hives, services: [{ ...cloud, role: 'cloud' }] });
  let aedesRate: number;
  try {
    aedesRate = await load(aedes.url, hives, cloud);
  } finally {
    await aedes.close();
  }
  const mosq = await startMosquitto();
  let mosqRate: number;
  try {
    mosqRate = await load(mosq.url, hives, cloud);
  } finally {
    mosq.proc.kill('SIGTERM');
  }
  console.log(`  mosquitto (baseline)         ${fmt(mosqRate).padStart(11)} msg/s  1.00`);
  console.log(
    `  embedded Aedes               ${fmt(aedesRate).padStart(11)} msg/s  ratio ${(aedesRate / mosqRate).toFixed(3)}`,
  );
}
