import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readCapture } from '../../src/capture/format.js';
import type { Io } from '../../src/cli/commands.js';
import { main } from '../../src/cli/main.js';
import { isAppError } from '../../src/core/errors.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { describeWithBinaries } from '../support/external-binaries.js';
import { startMosquitto } from './mosquitto.js';

const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
let mosquitto: Awaited<ReturnType<typeof startMosquitto>>;

describeWithBinaries(['mosquitto'], 'an external broker (Debian mosquitto)', () => {
  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });
  afterAll(() => mosquitto.stop());

  it('carries a run end to end with --broker: nothing lost', async () => {
    const r = await runScenario(QUICKSTART, { durationMs: 5 * 60_000, brokerUrl: mosquitto.url });
    expect(r.result.messages.lost).toBe(0);
    expect(r.result.messages.packetsDelivered).toBe(r.result.messages.packetsSent);
    expect(r.result.messages.packetsSent).toBeGreaterThan(1000);
  });

  it('refuses --record with --broker (recording taps the embedded broker)', async () => {
    const err = await runScenario(QUICKSTART, {
      durationMs: 60_000,
      brokerUrl: mosquitto.url,
      record: '/tmp/x.occap',
    }).catch((e: unknown) => e);
    expect(isAppError(err, 'USAGE')).toBe(true);
  });

  it('receives every hive message of a capture from occusim replay', async () => {
    const capture = join(mkdtempSync(join(tmpdir(), 'occusim-replay-')), 'q.occap');
    await runScenario(QUICKSTART, { durationMs: 3 * 60_000, record: capture });
    const expected = readCapture(capture).messages.filter((m) => !m.topic.endsWith('/ack'));
    const sub = await connectAsync(mosquitto.url, { clientId: 'replay-watch', clean: true });
    const got: string[] = [];
    sub.on('message', (topic) => got.push(topic));
    await sub.subscribeAsync('occusim/v1/hives/#', { qos: 1 });
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await main(['replay', capture, '--broker', mosquitto.url, '--speed', 'max'], {
      stdout,
      stderr: new PassThrough() as unknown as NodeJS.WriteStream,
    } as Io);
    for (let i = 0; i < 50 && got.length < expected.length; i++) await new Promise((r) => setTimeout(r, 50));
    await sub.endAsync();
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`replayed ${expected.length} message`));
    expect(got).toEqual(expected.map((m) => m.topic));
  });
});
