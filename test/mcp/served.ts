import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { mcpApiExtension } from '../../src/mcp/http-plugin.js';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AUDIENCE, startApiServer } from '../../src/api/server.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * The one place the MCP tests start a platform (the platform's entry points are being
 * redesigned: a merge should touch only this file). `servedQuickstart()` spawns
 * `occusim run scenarios/quickstart.yaml --serve` on free ports, from the TypeScript sources,
 * and resolves once the run has finished and the API serves its store.
 */
export const root = new URL('../../', import.meta.url).pathname;

function newest(dir: string): number {
  return Math.max(
    ...readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => statSync(join(e.parentPath, e.name)).mtimeMs),
  );
}

/** bin/occusim-mcp.js runs the compiled server: rebuilds dist/ when the sources are newer. */
export function buildMcp(): void {
  const built = (() => {
    try {
      return statSync(join(root, 'dist/mcp/stdio.js')).mtimeMs;
    } catch {
      return 0;
    }
  })();
  if (built >= newest(join(root, 'src'))) return;
  const r = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`build failed: ${r.stdout}${r.stderr}`);
}

export interface Served {
  api: string;
  clientId: string;
  clientSecret: string;
  audience: string;
  dbPath: string;
  /** Every line printed so far. */
  output(): string;
  close(): Promise<void>;
}

export function loadModel(file: string): ScenarioModel {
  const r = loadScenarioFile(join(root, file));
  if (!r.ok) throw new Error(`${file} does not load`);
  return r.model;
}

/**
 * `live: true` resolves as soon as the API serves, while the run goes on (`--speed 60`: a
 * simulated minute per second), for the subscription tests.
 */
export async function servedQuickstart(extra: readonly string[] = [], opts: { live?: boolean } = {}): Promise<Served> {
  const dbPath = join(mkdtempSync(join(tmpdir(), 'occusim-mcp-')), 'store.sqlite');
  const args = [
    '--import',
    'tsx',
    join(root, 'test/cli/fixtures/cli-entry.ts'),
    'run',
    join(root, 'scenarios/quickstart.yaml'),
    '--seed',
    '7',
    '--db',
    dbPath,
    '--serve',
    '--port',
    '0',
    '--mqtt-port',
    '0',
    '--quiet',
    ...extra,
  ];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const ready = new Promise<Served>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const api = /api listening on (http:\/\/\S+)/.exec(out);
      const client = /client \S+: client_id (\S+) client_secret (\S+)/.exec(out);
      if (api && client && (opts.live === true || /run finished; serving until Ctrl-C/.test(out))) {
        resolve({
          api: api[1] as string,
          clientId: client[1] as string,
          clientSecret: client[2] as string,
          audience: DEFAULT_AUDIENCE,
          dbPath,
          output: () => out,
          close: () => stop(child),
        });
      }
    });
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => reject(new Error(`occusim exited ${code}: ${err}`)));
  });
  return ready;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
}

/**
 * An in-process API over two organisations (quickstart's and office-day's), without a store:
 * for the isolation tests, where another organisation's ids exist on the same server.
 */
export async function twoOrganisations(): Promise<{
  api: string;
  own: ScenarioModel;
  other: ScenarioModel;
  close(): Promise<void>;
}> {
  const own = loadModel('scenarios/quickstart.yaml');
  const other = loadModel('scenarios/office-day.yaml');
  const server = await startApiServer({
    catalogue: catalogueFromScenario(own, other),
    port: 0,
    extensions: [mcpApiExtension],
  });
  return { api: server.url, own, other, close: () => server.close() };
}
