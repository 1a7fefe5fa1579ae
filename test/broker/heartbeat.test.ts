import { describe, expect, it } from 'vitest';
import { startBroker } from '../../src/broker/aedes-broker.js';
import { startMqttIngest } from '../../src/cloud/mqtt-ingest.js';
import { connectHive } from '../../src/hive/mqtt-hive.js';
import { decodeHeartbeat } from '../../src/proto/codec.js';
import type { HiveHeartbeat } from '../../src/proto/messages.js';

describe('hive heartbeats over the embedded broker', () => {
  it('reach the cloud ingest heartbeat hook, never its uplink handler, and the hive gets acks for its batches meanwhile', async () => {
    const broker = await startBroker({
      hives: [{ serial: 'HVHB1', password: 'pw' }],
      services: [{ username: 'cloud', password: 'c', role: 'cloud' }],
    });
    const heartbeats: HiveHeartbeat[] = [];
    const uplinks: string[] = [];
    const ingest = await startMqttIngest({
      brokerUrl: broker.url,
      username: 'cloud',
      password: 'c',
      clientId: 'cloud',
      onMessage: (topic) => {
        uplinks.push(topic);
        return Promise.resolve({ hiveSerial: 'HVHB1', ackedSeq: 1, ackedAtMs: 5 });
      },
      onHeartbeat: (_topic, payload) => void heartbeats.push(decodeHeartbeat(payload)),
    });
    const link = await connectHive({ brokerUrl: broker.url, serial: 'HVHB1', password: 'pw' });
    try {
      const hb: HiveHeartbeat = {
        hiveSerial: 'HVHB1',
        sentAtMs: 1,
        firmwareVersion: '1.2.3',
        protocolMinor: 1,
        state: 'online',
        uptimeMs: 10,
        netPathStability: 1,
        ackedSeq: 0,
        nextSeq: 1,
        bufferedBatches: 0,
        bufferedBytes: 0,
        droppedPackets: 0,
        sensors: [],
      };
      await link.heartbeat(hb);
      expect(await link.transmit({ hiveSerial: 'HVHB1', seq: 1, sentAtMs: 2, packets: [] })).toBe(1);
      for (let i = 0; i < 40 && heartbeats.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(heartbeats).toEqual([hb]);
      expect(uplinks).toEqual(['occusim/v1/hives/HVHB1/uplink']);
    } finally {
      await link.close();
      await ingest.close();
      await broker.close();
    }
  });
});
