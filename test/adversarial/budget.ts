/**
 * Sizes and seeds of the adversarial suite. CI runs it bounded (scale 1, under ~90 s on two
 * cores); `npm run fuzz` runs it with OCCUSIM_FUZZ_SCALE=20 (or whatever the caller sets).
 * Every family prints one line of counts, so a run's figures can be quoted as they are.
 */
export const SCALE = Math.max(0.1, Number(process.env['OCCUSIM_FUZZ_SCALE'] ?? 1) || 1);
/** Fixed unless the caller asks for another: a failure replays with the printed seed. */
export const SEED = Number(process.env['OCCUSIM_FUZZ_SEED'] ?? 20261124) | 0;

/** `base` cases at scale 1, never fewer than `min`. */
export const cases = (base: number, min = 1): number => Math.max(min, Math.round(base * SCALE));

export function report(family: string, counts: Record<string, number | string>): void {
  const parts = Object.entries(counts).map(
    ([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v}`,
  );
  process.stdout.write(`[adversarial] ${family}: seed=${SEED} scale=${SCALE} ${parts.join(' ')}\n`);
}

/** Wall time of one call, ms. */
export async function timed<T>(f: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await f();
  return { value, ms: performance.now() - t0 };
}

/** A test's time limit: `baseMs` at scale 1, growing with the scale. */
export const limitMs = (baseMs: number): number => Math.round(baseMs * Math.max(1, SCALE));
