import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The data path is the layout, and nothing imports upward: each folder of src/ may import
 * only the folders listed for it. The platform (assets, cloud, api, platform) never reads the
 * simulator's or the scenario file's types; the simulator reaches the platform only through
 * `platform/`. Import cycles are refused by `npm run lint` (madge).
 */
const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  scenario: ['core'],
  proto: ['core'],
  assets: ['core', 'scenario'],
  sim: ['core', 'scenario'],
  edge: ['core', 'scenario', 'sim'],
  mesh: ['core', 'scenario'],
  hive: ['core', 'scenario', 'proto', 'edge', 'mesh'],
  broker: ['core', 'proto'],
  store: ['core', 'proto', 'assets'],
  cloud: ['core', 'proto', 'assets', 'store'],
  api: ['core', 'assets', 'store', 'cloud', 'webhooks'],
  webhooks: ['core', 'assets', 'store', 'cloud'],
  mcp: ['core', 'api'],
  platform: ['core', 'proto', 'assets', 'store', 'broker', 'cloud', 'api', 'mcp', 'webhooks'],
  capture: ['core', 'proto', 'scenario'],
  run: ['core', 'scenario', 'assets', 'sim', 'edge', 'mesh', 'hive', 'capture', 'store', 'cloud', 'platform'],
  report: ['core', 'scenario', 'sim', 'cloud', 'platform', 'run'],
  explore: ['core', 'scenario', 'run'],
  cli: [
    'core',
    'scenario',
    'assets',
    'proto',
    'sim',
    'edge',
    'mesh',
    'hive',
    'broker',
    'capture',
    'store',
    'cloud',
    'api',
    'mcp',
    'platform',
    'run',
    'webhooks',
    'report',
    'explore',
  ],
};

const src = resolve(new URL('../src', import.meta.url).pathname);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const topFolder = (file: string): string => relative(src, file).split('/')[0] as string;

describe('folder layering of src/', () => {
  it('has a rule for every folder', () => {
    const folders = readdirSync(src).filter((n) => statSync(join(src, n)).isDirectory());
    expect(folders.filter((f) => !(f in ALLOWED))).toEqual([]);
  });

  it('imports only from the same folder or a folder below it on the data path', () => {
    const violations: string[] = [];
    for (const file of files(src)) {
      const from = topFolder(file);
      if (!(from in ALLOWED)) continue; // src/index.ts: the package's entry re-exports anything
      for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const to = topFolder(resolve(dirname(file), m[1] as string));
        if (to !== from && !(ALLOWED[from] as readonly string[]).includes(to))
          violations.push(`${relative(src, file)} imports ${m[1]}`);
      }
    }
    expect(violations).toEqual([]);
  });

  // Parts that may reach a folder only through one file of it: its port.
  const THROUGH_PORT: Record<string, { to: string; port: string }> = {
    mcp: { to: 'api', port: 'api/extension-port.ts' },
  };

  it('reaches the API from mcp/ only through its extension port', () => {
    const violations: string[] = [];
    for (const file of files(src)) {
      const rule = THROUGH_PORT[topFolder(file)];
      if (!rule) continue;
      for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts'));
        if (topFolder(target) === rule.to && relative(src, target) !== rule.port)
          violations.push(`${relative(src, file)} imports ${m[1]} (use ${rule.port})`);
      }
    }
    expect(violations).toEqual([]);
  });
});
