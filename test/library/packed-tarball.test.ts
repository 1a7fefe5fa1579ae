import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The library from another project: `npm pack` the package, install the tarball into a new
 * project beside Vitest, and run the README's "Library API" example there, from that
 * project's directory (a built-in scenario name, no path into this repository).
 *
 * Bounded in time (~1–2 min): the package is built into a staging copy (this tree's dist/ is
 * left alone), installs prefer npm's cache, and better-sqlite3's native addon is copied from
 * this checkout instead of compiled again (same Node, same machine; `npm install` here already
 * proved it builds from source).
 */
const root = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    maxBuffer: 16 * 1024 * 1024,
    timeout: 240_000,
  });

function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library API'));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README.md has no ts example under "## Library API"');
  return m[1] as string;
}

describe('the packed tarball, installed in another project (slow: packs, installs; bounded at 4 min)', () => {
  it('runs the README library example with Vitest', { timeout: 240_000 }, async () => {
    const work = mkdtempSync(join(tmpdir(), 'occusim-pack-'));
    // 1. A staging copy of what `files` ships, built from this tree's sources.
    const stage = join(work, 'stage');
    mkdirSync(stage);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      files: string[];
      devDependencies: Record<string, string>;
      version: string;
    };
    for (const entry of pkg.files.filter((f) => f !== 'dist'))
      cpSync(join(root, entry), join(stage, entry), { recursive: true });
    for (const f of ['package.json', 'README.md']) copyFileSync(join(root, f), join(stage, f));
    await run(
      process.execPath,
      [
        join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(root, 'tsconfig.build.json'),
        '--outDir',
        join(stage, 'dist'),
      ],
      { cwd: root, timeout: 180_000 },
    );
    const { stdout } = await npm(['pack', '--ignore-scripts', '--pack-destination', work], stage);
    const tarball = join(work, stdout.trim().split('\n').pop() as string);
    expect(readdirSync(work)).toContain(`occusim-${pkg.version}.tgz`);

    // 2. Another project: the tarball and Vitest, nothing else.
    const project = join(work, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'uses-occusim', private: true, type: 'module' }),
    );
    await npm(
      [
        'install',
        '--prefer-offline',
        '--ignore-scripts',
        tarball,
        `vitest@${pkg.devDependencies['vitest'] ?? 'latest'}`,
      ],
      project,
    );
    const addon = 'node_modules/better-sqlite3/build/Release';
    mkdirSync(join(project, addon), { recursive: true });
    copyFileSync(join(root, addon, 'better_sqlite3.node'), join(project, addon, 'better_sqlite3.node'));

    // 3. The README's example, as written, run from that project.
    writeFileSync(join(project, 'occupancy.test.ts'), readmeExample());
    const test = await run(
      process.execPath,
      [join(project, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=verbose'],
      { cwd: project, timeout: 120_000 },
    );
    expect(test.stdout).toMatch(/1 passed/);
  });
});
