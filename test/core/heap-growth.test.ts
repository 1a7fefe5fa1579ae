import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * The cap is process-wide, so it is checked in a child process: a heap that keeps three
 * generations of garbage alive grows far less past its live set once capped.
 */
const script = (cap: string): string => `
  import v8 from 'node:v8';
  const { capHeapGrowth } = await import(${JSON.stringify(new URL('../../src/core/heap-growth.ts', import.meta.url).href)});
  ${cap}
  const keep = [];
  let peak = 0;
  for (let round = 0; round < 25; round++) {
    const batch = [];
    for (let i = 0; i < 200000; i++) batch.push({ a: i * 1.5, b: [i, i + 0.5] });
    keep.push(batch);
    if (keep.length > 3) keep.shift();
    await new Promise((r) => setImmediate(r));
    peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
  }
  console.log(peak);
`;

function peakHeap(cap: string): number {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(cap)], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return Number(r.stdout.trim());
}

describe('capHeapGrowth', () => {
  it('keeps a heap closer to its live set, and the lowest cap asked for holds', () => {
    const free = peakHeap('');
    const capped = peakHeap('capHeapGrowth(30); capHeapGrowth(300);');
    expect(capped).toBeLessThan(free * 0.75);
  }, 120_000);
});
