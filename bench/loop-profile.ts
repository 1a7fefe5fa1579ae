/**
 * `npx tsx bench/loop-profile.ts <dir> <sensors> [ticks]`: self time per function, in µs per
 * sensor-tick, of a `--cpu-prof` profile written by bench/sim-interleave.ts
 * (`NODE_FLAGS="--cpu-prof --cpu-prof-dir=<dir>" ROUNDS=1 npx tsx bench/sim-interleave.ts 3x30k`),
 * from the first sample inside the world's `step` on (set-up excluded; the 30 warm-up ticks
 * included, `ticks` in all, default 90). Prints JSON: the total and every function's figure,
 * to set two specs' profiles side by side.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const [dir = '.', sensorsArg = '1', ticksArg = '90'] = process.argv.slice(2);
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`loop-profile: no .cpuprofile in ${dir}`);
const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const nodes = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n: Node | undefined): string =>
  n
    ? `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '')}:${n.callFrame.lineNumber + 1}`
    : '?';
const inStep = (id: number): boolean => {
  for (let x: number | undefined = id; x !== undefined; x = parent.get(x))
    if (/^step sim\/engine/.test(name(nodes.get(x)))) return true;
  return false;
};
const start = p.samples.findIndex((id) => inStep(id));
const self = new Map<string, number>();
let busy = 0;
for (let i = Math.max(0, start); i < p.samples.length; i++) {
  const fn = name(nodes.get(p.samples[i] ?? -1));
  if (fn.startsWith('(idle)')) continue;
  const d = p.timeDeltas[i + 1] ?? 0;
  busy += d;
  self.set(fn, (self.get(fn) ?? 0) + d);
}
const per = (us: number): number => us / Number(sensorsArg) / Number(ticksArg);
console.log(
  JSON.stringify({
    total: per(busy),
    functions: [...self].map(([k, v]) => [k, per(v)]).sort((a, b) => (b[1] as number) - (a[1] as number)),
  }),
);
