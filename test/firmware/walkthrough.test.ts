import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/fixtures/run-cli.js';

/**
 * docs/firmware.md, end to end, with a device played by a plain mqtt.js script that knows
 * only what the doc gives it: the credentials JSON, the broker URL printed at start, and the
 * vector files. The occusim side runs as a real process, as a firmware engineer runs it.
 */
const root = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);
const device = join(root, 'test/firmware/fake-device.mjs');
const vectors = join(root, 'proto/vectors');

function occusim(args: string[]): {
  child: ReturnType<typeof spawn>;
  url: Promise<string>;
  output: () => string;
  exit: Promise<number | null>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /(?:mqtt listening on|check: listening on) (mqtt:\/\/\S+)/.exec(out);
      if (m && /hive Bench hive: serial HV0011223344 username HV0011223344 password bench-hive-password/.test(out))
        resolve(m[1] as string);
    });
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => reject(new Error(`occusim exited ${code}: ${out}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, url, output: () => out, exit };
}

async function credentials(): Promise<string> {
  const r = await cli('credentials', '--scenario', 'firmware');
  expect(r.code).toBe(0);
  const file = join(mkdtempSync(join(tmpdir(), 'occusim-fw-')), 'credentials.json');
  writeFileSync(file, r.out);
  return file;
}

describe('docs/firmware.md walkthrough', () => {
  it('credentials --scenario firmware gives the vectors\u2019 hive, its password, topics and sensors', async () => {
    const doc = JSON.parse((await cli('credentials', '--scenario', 'firmware')).out) as {
      hives: Array<Record<string, unknown>>;
    };
    expect(doc.hives).toEqual([
      {
        name: 'Bench hive',
        serial: 'HV0011223344',
        username: 'HV0011223344',
        password: 'bench-hive-password',
        publish: {
          uplink: 'occusim/v1/hives/HV0011223344/uplink',
          heartbeat: 'occusim/v1/hives/HV0011223344/heartbeat',
        },
        subscribe: { ack: 'occusim/v1/hives/HV0011223344/ack' },
        sensors: [
          { mac: '00-17-0d-00-00-00-00-01', name: 'Lab sensor', mode: 'presence' },
          { mac: '00-17-0d-00-00-00-00-02', name: 'Booth sensor', mode: 'presence' },
          { mac: '00-17-0d-00-00-00-00-03', name: 'Booth door counter', mode: 'traffic' },
        ],
      },
    ]);
  });

  it('check --listen on every interface: the replayed session is conformant (exit 0)', async () => {
    const creds = await credentials();
    const check = occusim(['check', '--listen', '--scenario', 'firmware', '--host', '0.0.0.0', '--duration', '8s']);
    const url = (await check.url).replace('0.0.0.0', '127.0.0.1');
    const dev = await run(process.execPath, [device, url, creds, vectors]);
    expect(JSON.parse(dev.stdout)).toEqual({ acked: 3, published: 4 });
    expect(await check.exit).toBe(0);
    expect(check.output()).toMatch(
      /check summary: \d+ messages — 3 uplinks \(0 retransmissions\), 3 acks, 1 heartbeats: conformant/,
    );
    expect(check.output()).not.toMatch(/VIOLATION/);
  });

  it('check --listen exits 1 when nothing arrived', async () => {
    const r = await cli('check', '--listen', '--scenario', 'firmware', '--duration', '1s');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/nothing arrived \(no device was checked\)/);
  });

  it('serve: the platform acknowledges the session and dead-letters none of it', async () => {
    const creds = await credentials();
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-fw-')), 'store.sqlite');
    const serve = occusim(['serve', '--scenario', 'firmware', '--db', db, '--port', '0']);
    try {
      const dev = await run(process.execPath, [device, await serve.url, creds, vectors]);
      expect(JSON.parse(dev.stdout)).toEqual({ acked: 3, published: 4 });
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect(await serve.exit).toBe(0);
    const letters = await cli('deadletters', '--db', db, '--json');
    expect(JSON.parse(letters.out)).toMatchObject({ deadLetters: [] });
  });
});
