import { setFlagsFromString } from 'node:v8';

/**
 * After each mark-compact V8 lets a heap grow to up to 4× what survived before the next one
 * (its dynamic factor goes to the maximum when a program allocates fast, as the simulator
 * does), and a run spread over threads has a heap per thread: the run's, the platform's, the
 * hives', the frame workers'. On fleet.yaml that headroom, not live data, was most of the
 * difference between one thread (1.4 GB peak RSS) and the default layout (2.1 GB): the run's
 * heap swung 300 → 757 MB, the hive thread's 300 → 615 MB (bench/README.md, "Memory per
 * sensor").
 *
 * `capHeapGrowth(p)` caps every heap of the process at (1 + p/100)× its live set from the next
 * collection on (V8's --heap-growing-percent, process-wide); the lowest cap asked for holds, and
 * a --heap-growing-percent given on the command line or in NODE_OPTIONS wins. It is not a limit: a heap still
 * grows as far as its live set needs, so no fleet runs out of memory for it (a
 * `resourceLimits` cap would); the price is more frequent mark-compacts, measured in the
 * callers' comments.
 */
let capped: number | null = null;

export function capHeapGrowth(percent: number): void {
  // The user's own choice wins, on the command line or in NODE_OPTIONS (not in execArgv).
  if (
    process.execArgv.some((a) => a.startsWith('--heap-growing-percent')) ||
    (process.env.NODE_OPTIONS ?? '').includes('--heap-growing-percent')
  )
    return;
  if (capped !== null && capped <= percent) return;
  capped = percent;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
