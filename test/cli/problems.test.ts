import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { startBroker } from '../../src/broker/aedes-broker.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { cli } from './fixtures/run-cli.js';

/**
 * Every input or environment problem of the command line is one line on stderr and exit 2,
 * found before a long run starts, with no stack trace (the list, one test each).
 */
const root = new URL('../../', import.meta.url).pathname;
const quickstart = join(root, 'scenarios/quickstart.yaml');

function oneLine(err: string): void {
  expect(err.trim().split('\n')).toHaveLength(1);
  expect(err).not.toMatch(/\n\s+at /);
}

async function occupied(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, server };
}

describe('command-line problems', () => {
  it('an unknown flag: one line with a "did you mean", exit 2', async () => {
    const r = await cli('run', quickstart, '--sed', '5');
    expect(r.code).toBe(2);
    oneLine(r.err);
    expect(r.err).toMatch(/^occusim run: unknown option '--sed'; did you mean --seed\?/);
  });

  it('an unknown command: one line with a "did you mean", exit 2', async () => {
    const r = await cli('valdate', quickstart);
    expect(r.code).toBe(2);
    oneLine(r.err);
    expect(r.err).toMatch(/unknown command 'valdate'; did you mean validate\?/);
  });

  it('options of other commands are refused, exit 2', async () => {
    for (const argv of [
      ['validate', quickstart, '--seed', '5'],
      ['validate', quickstart, '--port', '99'],
      ['validate', quickstart, '--graphql'],
      ['run', quickstart, '--sensor', 'Foo'],
      ['run', quickstart, '--port', '9999'],
      ['serve', '--scenario', quickstart, '--seed', '5'],
      ['check', join(root, 'x.occap'), '--scenario', quickstart],
      ['deadletters', '--db', 'x', '--seed', '1'],
    ]) {
      const r = await cli(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      oneLine(r.err);
    }
  });

  it('each command has its own generated help', async () => {
    const run = await cli('run', '--help');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/--mqtt-port <n>\s+embedded MQTT broker port \(default 0/);
    expect(run.out).toMatch(/--expect <threshold>/);
    expect(run.out).not.toMatch(/--sensor/);
    const frames = await cli('frames', '--help');
    expect(frames.out).toMatch(/--sensor/);
    expect(frames.out).not.toMatch(/--expect/);
  });

  it('--report into a missing directory fails before the run starts', async () => {
    const t0 = performance.now();
    const r = await cli('run', 'office-day', '--report', '/nonexistent-dir/r.json');
    expect(r.code).toBe(2);
    oneLine(r.err);
    expect(r.err).toMatch(/--report \/nonexistent-dir\/r\.json: the directory \/nonexistent-dir does not exist/);
    expect(r.out).toBe('');
    expect(performance.now() - t0).toBeLessThan(5000); // an office day takes far longer to simulate
  });

  it('a port in use: one line naming it, exit 2 (run and serve)', async () => {
    const { port, server } = await occupied();
    try {
      const run = await cli('run', quickstart, '--mqtt-port', String(port), '--duration', '10m');
      expect(run.code).toBe(2);
      oneLine(run.err);
      expect(run.err).toMatch(new RegExp(`${port}.*address already in use`));
      const serve = await cli('serve', '--scenario', quickstart, '--port', String(port), '--mqtt-port', '0');
      expect(serve.code).toBe(2);
      oneLine(serve.err);
      expect(serve.err).toMatch(/EADDRINUSE|in use/);
    } finally {
      server.close();
    }
  });

  it('an unreadable file: one line, exit 2 (a directory as scenario, a missing capture)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-cli-'));
    const scenario = await cli('validate', dir);
    expect(scenario.code).toBe(2);
    expect(scenario.err).toMatch(/cannot read file \(EISDIR\)/);
    const capture = await cli('check', join(dir, 'missing.occap'));
    expect(capture.code).toBe(2);
    oneLine(capture.err);
  });

  it('a bad --expect: one line with a "did you mean", exit 2, before the run', async () => {
    const r = await cli('run', 'office-day', '--expect', 'rooms.mea<0.5');
    expect(r.code).toBe(2);
    oneLine(r.err);
    expect(r.err).toMatch(/unknown metric `rooms\.mea`; did you mean `rooms\.mae`\?/);
    const unit = await cli('run', 'office-day', '--expect', 'rooms.mae<5s');
    expect(unit.code).toBe(2);
    expect(unit.err).toMatch(/takes no unit/);
  });

  it('replay without --scenario against an occusim broker says to pass --scenario, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-replay-'));
    const capture = join(dir, 'q.occap');
    await runScenario(quickstart, { durationMs: 2 * 60_000, record: capture, keepStore: false });
    const model = (
      loadScenarioFile(quickstart) as { ok: true; model: { hives: Array<{ serial: string; password: string }> } }
    ).model;
    const broker = await startBroker({
      port: 0,
      hives: model.hives.map((h) => ({ serial: h.serial, password: h.password })),
      services: [],
    });
    try {
      const r = await cli('replay', capture, '--broker', broker.url);
      expect(r.code).toBe(2);
      oneLine(r.err);
      expect(r.err).toMatch(/pass --scenario <file>/);
      const ok = await cli('replay', capture, '--broker', broker.url, '--scenario', quickstart);
      expect(ok.code).toBe(0);
    } finally {
      await broker.close();
    }
  });

  it('a closed stdout (occusim schema | head): one line on stderr, exit 2, no EPIPE crash', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), 'schema'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy(); // the reader went away before the first byte
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    oneLine(err);
    expect(err).toMatch(/stdout closed before the output ended \(EPIPE\)/);
  });

  it('an internal error is one line without --debug', async () => {
    // `occusim` alone: the help on stderr, a usage error.
    const r = await cli();
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/Usage: occusim/);
  });
});
