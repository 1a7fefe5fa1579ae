import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { EmbeddedBroker } from '../../src/broker/aedes-broker.js';
import { DeferredHiveLink } from '../../src/hive/deferred-link.js';
import { connectHive } from '../../src/hive/mqtt-hive.js';
import { ackingCloud, HIVES, startTestBroker } from '../broker/support.js';

/** The late login of a hive a ramp brings online (scenario/ramp.ts), against the real broker. */
let broker: EmbeddedBroker;
const closers: Array<{ close(): Promise<void> } | MqttClient> = [];

beforeEach(async () => {
  broker = await startTestBroker();
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => ('endAsync' in c ? c.endAsync(true) : c.close())));
  await broker.close();
});

const deferred = (i: 0 | 1): DeferredHiveLink => {
  const link = new DeferredHiveLink(() =>
    connectHive({ brokerUrl: broker.url, serial: HIVES[i].serial, password: HIVES[i].password }),
  );
  closers.push(link);
  return link;
};

describe('DeferredHiveLink', () => {
  it('logs in only when connected, both hives of a step at once, once each, then sends', async () => {
    const cloud = await ackingCloud(broker.url);
    closers.push(cloud.client);
    const before = broker.stats().connections;
    const [a, b] = [deferred(0), deferred(1)];
    expect(broker.stats().connections).toBe(before);
    expect(a.stats()).toEqual({ published: 0, acked: 0, bytesSent: 0 });
    await Promise.all([a.connect(), b.connect(), a.connect()]);
    expect(broker.stats().connections).toBe(before + 2);
    expect(a.connected && b.connected).toBe(true);
    const seq = await a.transmit({ hiveSerial: 'HVA', seq: 1, sentAtMs: 1_772_434_800_000, packets: [] });
    expect(seq).toBe(1);
    expect(a.stats().acked).toBe(1);
  });

  it('a link never brought online closes without logging in, and refuses to send once closed', async () => {
    const before = broker.stats().connections;
    const link = deferred(0);
    await link.close();
    expect(broker.stats().connections).toBe(before);
    await expect(link.heartbeat({} as never)).rejects.toThrow(/closed/);
  });
});
