/**
 * Edge section: thermal frame synthesis + detection throughput. The measurements live in
 * bench/edge-frames.mjs and run in a fresh process per build: plain `node` on the compiled
 * `dist/` (what bin/occusim.js runs; the targets are read there), then the TypeScript sources
 * through tsx. A process of its own because tsx's loader detaches an ArrayBuffer in the main
 * thread, which makes V8 slow every typed-array access of that isolate (edge-frames.mjs).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const driver = fileURLToPath(new URL('bench/edge-frames.mjs', root));

export function runEdgeBench(): Promise<void> {
  console.log('== edge: thermal frame synthesis + detection');
  if (distIsFresh()) run('compiled dist/ (what bin/occusim.js runs; plain node)', [driver, 'dist']);
  else
    console.log(
      '  (dist/ missing or older than src/: run `npm run build` to measure the compiled path, which the targets refer to)',
    );
  run('TypeScript sources (node --import tsx)', ['--import', 'tsx', driver, 'src']);
  return Promise.resolve();
}

function run(label: string, args: string[]): void {
  console.log(`  ${label}:`);
  const r = spawnSync(process.execPath, args, { cwd: fileURLToPath(root), stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`bench/edge-frames.mjs ${args.at(-1) ?? ''} exited with ${String(r.status)}`);
}

/** dist/ is built and not older than the sources the edge measurements load. */
function distIsFresh(): boolean {
  const newest = (dir: string): number => {
    const path = fileURLToPath(new URL(dir, root));
    return Math.max(
      ...readdirSync(path, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => statSync(`${e.parentPath}/${e.name}`).mtimeMs),
    );
  };
  const pool = fileURLToPath(new URL('dist/edge/pool/frame-pool.js', root));
  return (
    existsSync(pool) && newest('dist/edge') >= newest('src/edge') && newest('dist/scenario') >= newest('src/scenario')
  );
}
