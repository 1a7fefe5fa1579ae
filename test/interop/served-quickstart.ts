import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * A finished `occusim run quickstart --serve` in a child process, with what its start-up
 * printed — the API's URL, the audience, a client's id and secret, a user's password — as a
 * user copies them from the terminal into a client of their own.
 */
export interface ServedQuickstart {
  api: string;
  audience: string;
  client: { id: string; secret: string };
  user: { username: string; password: string };
  model: ScenarioModel;
  stop(): Promise<void>;
}

const root = new URL('../../', import.meta.url).pathname;

function printed(out: string, re: RegExp, what: string): RegExpExecArray {
  const m = re.exec(out);
  if (!m) throw new Error(`occusim run --serve did not print ${what}:\n${out}`);
  return m;
}

export async function serveQuickstart(duration = '30m'): Promise<ServedQuickstart> {
  const scenario = join(root, 'scenarios/quickstart.yaml');
  const loaded = loadScenarioFile(scenario);
  if (!loaded.ok) throw new Error('quickstart does not load');
  const args = ['run', scenario, '--duration', duration, '--serve', '--port', '0', '--mqtt-port', '0', '--quiet'];
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/cli/fixtures/cli-entry.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = await new Promise<string>((resolve, reject) => {
    let text = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => {
      text += c.toString();
      if (text.includes('run finished; serving until Ctrl-C')) resolve(text);
    });
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => reject(new Error(`occusim exited ${code}: ${err}`)));
  });
  const [, clientId, secret] = printed(out, /^client \S+: client_id (\S+) client_secret (\S+)$/m, 'a client');
  const [, username, password] = printed(out, /^user (\S+): password (\S+)$/m, 'a user');
  return {
    api: printed(out, /api listening on (http:\/\/\S+)/, 'the API URL')[1] as string,
    audience: printed(out, /audience (\S+)/, 'the audience')[1] as string,
    client: { id: clientId as string, secret: secret as string },
    user: { username: username as string, password: password as string },
    model: loaded.model,
    stop: () => stopChild(child),
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
}
