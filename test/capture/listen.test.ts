import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import type { Io } from '../../src/cli/commands.js';
import { main } from '../../src/cli/main.js';
import { heartbeatTopic, uplinkTopic } from '../../src/core/topics.js';
import { encodeHeartbeat, encodeUplink } from '../../src/proto/codec.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { describeWithBinaries } from '../support/external-binaries.js';

const run = promisify(execFile);
const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

// A device under test, played by Debian's mosquitto_pub (an independent MQTT client)
// publishing hand-built frames to `occusim check --listen`.
describeWithBinaries(['mosquitto_pub'], 'occusim check --listen', () => {
  it('checks a device under test live: conformant frames pass, a deliberate violation is reported', async () => {
    const loaded = loadScenarioFile(QUICKSTART);
    if (!loaded.ok) throw new Error('quickstart does not load');
    const hive = loaded.model.hives[0]!;
    const [a, b] = loaded.model.sensors.filter((s) => s.mode === 'presence');
    const t0 = loaded.model.startMs;
    const dir = mkdtempSync(join(tmpdir(), 'occusim-dut-'));
    const frame = (name: string, bytes: Uint8Array): string => {
      const f = join(dir, name);
      writeFileSync(f, bytes);
      return f;
    };
    const presence = (mac: string, at: number) => ({
      kind: 'presence' as const,
      sensorMac: mac,
      sensedAtMs: at,
      detections: [[0.5, 0.5] as const],
    });
    const frames: Array<[string, string]> = [
      [
        uplinkTopic(hive.serial),
        frame(
          '1.bin',
          encodeUplink({
            hiveSerial: hive.serial,
            seq: 1,
            sentAtMs: t0 + 10_000,
            packets: [presence(a!.mac, t0 + 9000), presence(b!.mac, t0 + 9000)],
          }),
        ),
      ],
      [
        uplinkTopic(hive.serial),
        frame(
          '2.bin',
          encodeUplink({
            hiveSerial: hive.serial,
            seq: 2,
            sentAtMs: t0 + 20_000,
            packets: [presence(a!.mac, t0 + 19_000)],
          }),
        ),
      ],
      // Deliberate violation: a sensor this hive does not have.
      [
        uplinkTopic(hive.serial),
        frame(
          '3.bin',
          encodeUplink({
            hiveSerial: hive.serial,
            seq: 3,
            sentAtMs: t0 + 30_000,
            packets: [presence('00-17-0d-00-00-de-ad-00', t0 + 29_000)],
          }),
        ),
      ],
      [
        heartbeatTopic(hive.serial),
        frame(
          'hb.bin',
          encodeHeartbeat({
            hiveSerial: hive.serial,
            sentAtMs: t0 + 30_000,
            firmwareVersion: '2.0.1',
            protocolMinor: 1,
            state: 'streaming',
            uptimeMs: 30_000,
            netPathStability: 1,
            ackedSeq: 2,
            nextSeq: 4,
            bufferedBatches: 1,
            bufferedBytes: 80,
            droppedPackets: 0,
            sensors: [],
          }),
        ),
      ],
    ];

    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const listening = new Promise<string>((resolve) =>
      stdout.on('data', () => {
        const m = /listening on mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(m[1]!);
      }),
    );
    const done = main(['check', '--listen', '--scenario', QUICKSTART, '--duration', '5s'], {
      stdout,
      stderr: new PassThrough() as unknown as NodeJS.WriteStream,
    } as Io);
    const port = await listening;
    for (const [topic, file] of frames) {
      await run('mosquitto_pub', [
        '-h',
        '127.0.0.1',
        '-p',
        port,
        '-u',
        hive.serial,
        '-P',
        hive.password,
        '-q',
        '1',
        '-t',
        topic,
        '-f',
        file,
      ]);
    }
    const code = await done;

    expect(out).toMatch(
      /VIOLATION message \d+ occusim\/v1\/hives\/\w+\/uplink packets\[0\]\.sensor_mac: \[known-sensor\] sensor 00-17-0d-00-00-de-ad-00 is not attached/,
    );
    expect(out).toMatch(
      /check summary: \d+ messages — 3 uplinks \(0 retransmissions\), 3 acks, 1 heartbeats: 1 violation\(s\) \(known-sensor 1\)/,
    );
    expect(code).toBe(1);
  });

  it('refuses a device that logs in with the wrong password', async () => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const done = main(['check', '--listen', '--scenario', QUICKSTART, '--duration', '2s'], {
      stdout,
      stderr: new PassThrough() as unknown as NodeJS.WriteStream,
    } as Io);
    await new Promise<void>((resolve) => stdout.on('data', () => /listening on/.test(out) && resolve()));
    const port = /:(\d+) /.exec(out)![1]!;
    const r = await run('mosquitto_pub', [
      '-h',
      '127.0.0.1',
      '-p',
      port,
      '-u',
      'HVNOPE',
      '-P',
      'x',
      '-q',
      '1',
      '-t',
      'occusim/v1/hives/HVNOPE/uplink',
      '-m',
      'x',
    ]).catch((e: { code: number; stderr: string }) => e);
    expect((r as { code: number }).code).not.toBe(0);
    // Nothing arrived, so no device was checked: that is no pass.
    expect(await done).toBe(1);
    expect(out).toMatch(/check summary: 0 messages .*nothing arrived/);
  });
});
