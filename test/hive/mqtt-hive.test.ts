import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { EmbeddedBroker } from '../../src/broker/aedes-broker.js';
import { isAppError } from '../../src/core/errors.js';
import { connectHive } from '../../src/hive/mqtt-hive.js';
import type { HiveLink } from '../../src/hive/mqtt-hive.js';
import type { UplinkBatch } from '../../src/proto/messages.js';
import { ackingCloud, eventually, startTestBroker } from '../broker/support.js';

let broker: EmbeddedBroker;
const closers: Array<HiveLink | MqttClient> = [];

beforeEach(async () => {
  broker = await startTestBroker();
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => ('stats' in c ? c.close() : c.endAsync(true))));
  await broker.close();
});

const batch = (seq: number, serial = 'HVA'): UplinkBatch => ({
  hiveSerial: serial,
  seq,
  sentAtMs: 1_772_434_800_000 + seq * 10_000,
  packets: [
    {
      kind: 'traffic',
      sensorMac: '00-17-0d-00-00-aa-bb-cc',
      sensedAtMs: 1_772_434_800_000,
      intervalMs: 10_000,
      in: seq,
      out: 0,
    },
  ],
});

async function hive(opts: { ackTimeoutMs?: number; password?: string } = {}): Promise<HiveLink> {
  const link = await connectHive({
    brokerUrl: broker.url,
    serial: 'HVA',
    password: opts.password ?? 'secret-a',
    ...(opts.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: opts.ackTimeoutMs }),
  });
  closers.push(link);
  return link;
}

describe('hive MQTT link', () => {
  it('connects with the right credentials and is refused with BROKER_FAILED otherwise', async () => {
    await hive();
    const refused = await connectHive({ brokerUrl: broker.url, serial: 'HVA', password: 'nope' }).catch(
      (e: unknown) => e,
    );
    expect(isAppError(refused, 'BROKER_FAILED')).toBe(true);
    expect(broker.stats()).toMatchObject({ connections: 1, refusedAuth: 1 });
  });

  it('fails with BROKER_FAILED when nothing listens at the url', async () => {
    const url = broker.url;
    await broker.close();
    const err = await connectHive({ brokerUrl: url, serial: 'HVA', password: 'secret-a' }).catch((e: unknown) => e);
    expect(isAppError(err, 'BROKER_FAILED')).toBe(true);
  });

  it('resolves publish only after the cloud has acked that seq', async () => {
    const cloud = await ackingCloud(broker.url, { hold: true });
    closers.push(cloud.client);
    const link = await hive();
    let done = false;
    const publishing = link.publish(batch(1)).then(() => (done = true));
    await eventually(() => cloud.batches.length === 1);
    expect(cloud.batches[0]).toEqual(batch(1));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    await cloud.release();
    await publishing;
    expect(done).toBe(true);
    expect(link.stats()).toMatchObject({ published: 1, acked: 1 });
    expect(link.stats().bytesSent).toBeGreaterThan(0);
  });

  it('rejects with TIMEOUT when no ack arrives within ackTimeoutMs', async () => {
    const link = await hive({ ackTimeoutMs: 100 });
    const err = await link.publish(batch(1)).catch((e: unknown) => e);
    expect(isAppError(err, 'TIMEOUT')).toBe(true);
    expect(link.stats()).toMatchObject({ published: 1, acked: 0 });
  });

  it("refuses to publish another hive's batch", async () => {
    const link = await hive();
    await expect(link.publish(batch(1, 'HVB'))).rejects.toSatisfy((e) => isAppError(e, 'USAGE'));
  });

  it('rejects pending publishes when closed, and publishes after close', async () => {
    const link = await hive();
    const pending = link.publish(batch(1)).catch((e: unknown) => e);
    await link.close();
    expect(isAppError(await pending, 'BROKER_FAILED')).toBe(true);
    await expect(link.publish(batch(2))).rejects.toSatisfy((e) => isAppError(e, 'BROKER_FAILED'));
  });

  it('reconnects after a broker restart on the same port and delivers the next batch', async () => {
    const link = await hive();
    const port = broker.port;
    await broker.close();
    broker = await startTestBroker({ port });
    const cloud = await ackingCloud(broker.url);
    closers.push(cloud.client);
    await link.publish(batch(1));
    expect(cloud.batches.map((b) => b.seq)).toEqual([1]);
    expect(broker.stats().connections).toBe(2);
  });

  it('round-trips 1,000 batches publish→ack quickly (figure printed)', async () => {
    const cloud = await ackingCloud(broker.url);
    closers.push(cloud.client);
    const link = await hive();
    const n = 1000;
    const t0 = process.hrtime.bigint();
    for (let seq = 1; seq <= n; seq++) await link.publish(batch(seq));
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    console.info(
      `hive link: ${n} publish→ack round trips in ${ms.toFixed(0)} ms (${((ms * 1000) / n).toFixed(0)} µs each)`,
    );
    expect(link.stats()).toMatchObject({ published: n, acked: n });
    expect(cloud.batches.map((b) => b.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    // Nagle + delayed ACK would cost ~40 ms a round trip (40 s in all); this bound catches that.
    expect(ms).toBeLessThan(15_000);
  });
});
