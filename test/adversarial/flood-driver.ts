import { platformConfig } from '../../src/platform/config.js';
import { organisationsFromScenario } from '../../src/assets/from-scenario.js';
/**
 * A served platform (broker, ingest, API) in a process of its own for past-minute-flood.test.ts,
 * so its RSS is this workload's alone and the API is probed from outside its event loop. Its
 * clock stands two hours after the fixture's start and its ticker finalises minutes every
 * second (as `occusim serve` does every 5 s). Prints one JSON line when ready (broker and API
 * URLs); when stdin closes, one JSON line of RSS (baseline, peak, after) and the counters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '../../src/core/clock.js';
import { startPlatform } from '../../src/platform/platform.js';
import { T0, tinyModel } from '../cloud/fixture.js';

const MB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const rss = (): number => process.memoryUsage.rss() / MB;

async function settle(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  return rss();
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'occusim-flood-'));
  const clock = new VirtualClock(T0 + 2 * 3_600_000);
  const model = tinyModel();
  const platform = await startPlatform(
    platformConfig({
      organisations: organisationsFromScenario(model),
      tickMs: model.tickMs,
      store: { kind: 'sqlite', path: join(dir, 'store.sqlite') },
      api: { port: 0, audience: 'https://api.occusim.local' },
      advanceEveryMs: 1000,
    }),
    { clock },
  );
  // A first API answer and a first finalisation (the minutes before now − look-back) before the baseline.
  await fetch(`${platform.apiUrl}/api/openapi.json`).then((r) => r.arrayBuffer());
  await new Promise((r) => setTimeout(r, 1200));
  const baseline = await settle();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 10);
  process.stdout.write(`${JSON.stringify({ brokerUrl: platform.brokerUrl, apiUrl: platform.apiUrl })}\n`);
  process.stdin.resume();
  await new Promise((r) => process.stdin.once('end', r));
  const peakUnderFlood = peak;
  clearInterval(sampler);
  const c = await platform.reads.counters();
  const after = await settle();
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    `${JSON.stringify({ baselineMb: baseline, peakMb: peakUnderFlood, afterMb: after, batches: c.batchesProcessed, packets: c.packetsProcessed, deadLettered: c.deadLettered, lateBeyondWindow: c.lateBeyondWindow })}\n`,
  );
}

await main();
