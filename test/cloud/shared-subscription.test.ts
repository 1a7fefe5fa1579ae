import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { describe, expect, it } from 'vitest';
import { startMqttIngest } from '../../src/cloud/mqtt-ingest.js';
import { uplinkTopic } from '../../src/core/topics.js';
import { HIVE } from './fixture.js';

/**
 * Several ingest processes split the hives' uplinks through an MQTT shared subscription
 * (`$share/<group>/…`). The embedded Aedes broker does not balance shared subscriptions, so
 * this runs against a real Mosquitto (installed on CI by .ci/run), as an external broker would.
 */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startMosquitto(): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const conf = join(mkdtempSync(join(tmpdir(), 'occusim-mosq-')), 'mosquitto.conf');
  writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\n`);
  const proc = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
  const url = `mqtt://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    try {
      const c = await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 500 });
      await c.endAsync();
      return { url, stop: () => proc.kill('SIGTERM') };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill('SIGKILL');
  throw new Error('mosquitto did not start');
}

describe('MQTT ingest with a shared subscription', () => {
  it('delivers each uplink to exactly one member of the group', async () => {
    const broker = await startMosquitto();
    const got: number[][] = [[], []];
    const ingests = await Promise.all(
      [0, 1].map((i) =>
        startMqttIngest({
          brokerUrl: broker.url,
          username: 'occusim-cloud',
          password: 'pw',
          clientId: `occusim-cloud-${i}`,
          shareGroup: 'ingest',
          onMessage: (_topic, payload) => {
            got[i]?.push(payload[0] as number);
            return Promise.resolve(null);
          },
        }),
      ),
    );
    const hive = await connectAsync(broker.url, { clientId: HIVE.serial });
    try {
      for (let n = 0; n < 20; n++) await hive.publishAsync(uplinkTopic(HIVE.serial), Buffer.from([n]), { qos: 1 });
      await new Promise((r) => setTimeout(r, 300));
      expect([...(got[0] ?? []), ...(got[1] ?? [])].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
      expect(got[0]?.length).toBeGreaterThan(0);
      expect(got[1]?.length).toBeGreaterThan(0);
    } finally {
      await hive.endAsync();
      for (const i of ingests) await i.close();
      broker.stop();
    }
  });
});
