import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The frame pool must never detach an ArrayBuffer: the first detach in an isolate makes V8
 * re-check every optimised typed-array access for detachment, ~20 % of the frame kernel
 * (src/edge/frame/packed.ts, bench/README.md). V8 reports the invalidation with
 * --trace-protector-invalidation. The check runs the compiled pool (dist/, built by
 * `npm install`) in plain node: tsx's own loader detaches buffers, so it cannot run under tsx.
 */
const dist = new URL('../../dist/edge/', import.meta.url);
const built = existsSync(fileURLToPath(new URL('pool/frame-pool.js', dist)));
const INVALIDATED = 'Invalidating protector cell ArrayBufferDetaching';

function traced(script: string): string {
  const r = spawnSync(process.execPath, ['--trace-protector-invalidation', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`child exited ${String(r.status)}: ${r.stderr}`);
  return r.stdout + r.stderr;
}

describe('the frame pool and V8 typed-array speed', () => {
  it('the probe sees a detach (control: one transfer invalidates the protector)', () => {
    expect(traced(`const b = new ArrayBuffer(8); structuredClone(b, { transfer: [b] }); console.log('ok');`)).toContain(
      INVALIDATED,
    );
  });

  it.runIf(built)('runs tasks through 2 workers without detaching any buffer, in the main thread or a worker', () => {
    const script = `
      const { poolRunner } = await import(${JSON.stringify(new URL('pool/frame-pool.js', dist).href)});
      const { stateViews } = await import(${JSON.stringify(new URL('frame/state.js', dist).href)});
      const { seedState } = await import(${JSON.stringify(new URL('frame/noise.js', dist).href)});
      const spec = { id: 's', mode: 0, cols: 8, rows: 8, side: 3.46, fps: 10, startMs: 0, reportIntervalMs: 1000, thresholdK: 0.6, netdK: 0.15,
        ambientC: 22, hvacAmplitudeK: 0.4, hvacPeriodMs: 1200000, personHeat: 80, absorbTauS: 14400, door: [0, 0, 0, 0], inSign: 1, entrance: 0, heightM: 3, magnify: [1, 1, 1, 1, 1, 1] };
      const st = stateViews(64); seedState(st.rng, [0.1, 0.2, 0.3, 0.4]); st.bg.fill(22);
      const batch = () => ({ ticks: Float64Array.of(-1000, 0, 1000), offsets: Int32Array.of(0, 1, 2, 3), ids: new Int32Array(3), people: Float32Array.of(1.7, 1.7, 0, 32, 1.8, 1.7, 0, 32, 1.9, 1.7, 0, 32) });
      const runner = poolRunner(2);
      const tasks = [0, 1, 2, 3].map(() => ({ specs: [spec], states: [st.buffer.slice(0)], batches: [batch()] }));
      const results = await runner.run(tasks);
      await runner.close();
      if (results.length !== 4 || results.some((r) => r.outputs[0].length === 0 || r.states[0].byteLength !== st.buffer.byteLength)) throw new Error('bad results');
      console.log('ok');`;
    const out = traced(script);
    expect(out).toContain('ok');
    expect(out).not.toContain(INVALIDATED);
  });
});
