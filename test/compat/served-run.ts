import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PUBLISHED_AUDIENCE } from '../../src/api/server.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * A finished `occusim run <scenario> --serve` in a child process, reached over real HTTP as
 * an existing client of the reference platform would reach it: logged in with the
 * reference's published audience.
 */
export interface ServedRun {
  api: string;
  db: string;
  model: ScenarioModel;
  token: string;
  /** The simulated instant the run ended at. */
  endMs: number;
  stop(): Promise<void>;
}

const root = new URL('../../', import.meta.url).pathname;

export async function serveRun(scenario: string, duration: string, durationMs: number): Promise<ServedRun> {
  const loaded = loadScenarioFile(join(root, 'scenarios', scenario));
  if (!loaded.ok) throw new Error(`${scenario} does not load`);
  const db = join(mkdtempSync(join(tmpdir(), 'occusim-compat-')), 'store.sqlite');
  const args = [
    'run',
    join(root, 'scenarios', scenario),
    '--duration',
    duration,
    '--db',
    db,
    '--serve',
    '--port',
    '0',
    '--mqtt-port',
    '0',
    '--quiet',
  ];
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = await new Promise<string>((resolve, reject) => {
    let text = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => {
      text += c.toString();
      if (
        /api listening on http:\/\/\S+/.test(text) &&
        /client \S+: client_id/.test(text) &&
        /run finished; serving until Ctrl-C/.test(text)
      )
        resolve(text);
    });
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => reject(new Error(`occusim exited ${code}: ${err}`)));
  });
  const api = (/api listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1] as string;
  const [, clientId, secret] = /client \S+: client_id (\S+) client_secret (\S+)/.exec(out) as unknown as [
    string,
    string,
    string,
  ];
  const res = await fetch(`${api}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: clientId,
      client_secret: secret,
      audience: PUBLISHED_AUDIENCE,
      grant_type: 'client_credentials',
    }),
  });
  if (res.status !== 200)
    throw new Error(`login with the published audience answered ${res.status}: ${await res.text()}`);
  const token = ((await res.json()) as { access_token: string }).access_token;
  return {
    api,
    db,
    model: loaded.model,
    token,
    endMs: loaded.model.startMs + durationMs,
    stop: () => stopChild(child),
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
}

export async function post(
  run: ServedRun,
  path: string,
  body: unknown,
): Promise<{ status: number; json: unknown; text: string }> {
  const res = await fetch(`${run.api}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${run.token}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, json, text };
}
