import { describe, expect, it } from 'vitest';
import { topicMatches } from '../../src/broker/shared-subscriptions.js';
import { startMqttIngest, type MqttIngest } from '../../src/cloud/mqtt-ingest.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { CLOUD, hiveClient, HIVES, startTestBroker } from './support.js';

/** Two cloud ingest clients in one `$share` group on the embedded broker (the documented extension). */
async function ingests(url: string, got: number[][]): Promise<MqttIngest[]> {
  return Promise.all(
    got.map((list, i) =>
      startMqttIngest({
        brokerUrl: url,
        username: CLOUD.username,
        password: CLOUD.password,
        clientId: `ingest-${i}`,
        shareGroup: 'ingest',
        onMessage: (topic, payload) => {
          expect(topic).toMatch(/^occusim\/v1\/hives\/HV[AB]\/uplink$/); // the original topic, not $share/…
          list.push(((payload[0] as number) << 8) | (payload[1] as number));
          return Promise.resolve(null);
        },
      }),
    ),
  );
}

const settle = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('shared subscriptions on the embedded broker', () => {
  it('splits the uplinks of two hives between the members of a group, each processed exactly once', async () => {
    const broker = await startTestBroker();
    const got: number[][] = [[], []];
    const members = await ingests(broker.url, got);
    const hives = await Promise.all([hiveClient(broker.url, 0), hiveClient(broker.url, 1)]);
    try {
      const N = 40;
      for (let n = 0; n < N; n++) {
        const payload = Buffer.alloc(2);
        payload.writeUInt16BE(n);
        await hives[n % 2]!.publishAsync(uplinkTopic(HIVES[n % 2]!.serial), payload, { qos: 1 });
      }
      await settle(() => got[0]!.length + got[1]!.length >= N);
      await new Promise((r) => setTimeout(r, 50)); // nothing delivered twice arrives late either
      expect([...got[0]!, ...got[1]!].sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, n) => n));
      // Round-robin: an even split.
      expect(got[0]!.length).toBe(N / 2);
      expect(got[1]!.length).toBe(N / 2);
    } finally {
      for (const h of hives) await h.endAsync();
      for (const m of members) await m.close();
      await broker.close();
    }
  });

  it('gives every message to the remaining member once the other has left the group', async () => {
    const broker = await startTestBroker();
    const got: number[][] = [[], []];
    const members = await ingests(broker.url, got);
    const hive = await hiveClient(broker.url, 0);
    try {
      await members[1]!.close();
      for (let n = 0; n < 10; n++) {
        const payload = Buffer.alloc(2);
        payload.writeUInt16BE(n);
        await hive.publishAsync(uplinkTopic(HIVES[0].serial), payload, { qos: 1 });
      }
      await settle(() => got[0]!.length >= 10);
      expect(got[0]).toEqual(Array.from({ length: 10 }, (_, n) => n));
      expect(got[1]).toEqual([]);
    } finally {
      await hive.endAsync();
      await members[0]!.close();
      await broker.close();
    }
  });

  it('matches topics against filters with + and # as MQTT does', () => {
    const f = (filter: string, topic: string): boolean => topicMatches(filter.split('/'), topic);
    expect(f('occusim/v1/hives/+/uplink', 'occusim/v1/hives/HV1/uplink')).toBe(true);
    expect(f('occusim/v1/hives/+/uplink', 'occusim/v1/hives/HV1/ack')).toBe(false);
    expect(f('occusim/v1/hives/+/uplink', 'occusim/v1/hives/HV1/uplink/x')).toBe(false);
    expect(f('occusim/#', 'occusim/v1/hives/HV1/uplink')).toBe(true);
    expect(f('occusim/v1/#', 'occusim/v1')).toBe(true);
  });
});
