/**
 * `npm run bench -- scale alloc [sizes] [fidelity]`: what the simulator's thread allocates per
 * sensor-tick, by allocation site. Each fleet (scale.ts's `fleetYaml`; `frame` = 8×8 arrays with
 * 2 frame workers, as the scale bench runs it; or `model`) in its own process from dist/: world,
 * truth recorder and the run's edge stage (accuracy wrapper included), drained every batch
 * interval; 30 warm-up ticks, then 60 ticks under V8's sampling heap profiler with the objects
 * that the scavenger and the mark-compactor collected included (so garbage counts, not only what
 * survives), and the garbage collections of those 60 ticks by kind. Only this thread's heap: the
 * frame workers' own garbage shows in `scale threads … frame` (their GC share).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fidelityOf, fleetYaml } from './scale.js';

const parseSize = (s: string): number => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

interface Probe {
  bytesPerSensorTick: number;
  cpuUsPerSensorTick: number;
  gcs: Record<string, { count: number; ms: number }>;
  sites: Array<[string, number]>;
}

export async function runAllocProbe(root: string, sizesArg = '30k,100k', fidelitySpec = 'frame'): Promise<void> {
  const fid = fidelityOf(fidelitySpec);
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-alloc-'));
  try {
    console.log(
      `\n== scale alloc: the simulator's thread's allocation per sensor-tick by site, ${fid.label} fidelity, 30 warm-up ticks then 60, each fleet in its own process from dist/ (load average at start ${loadavg()[0]?.toFixed(1)})`,
    );
    for (const target of sizesArg.split(',').map(parseSize)) {
      const { text, sensors } = fleetYaml(root, target, fid.array);
      const file = join(dir, `fleet-${sensors}.yaml`);
      writeFileSync(file, text);
      const p = probeOnce(root, file, fid.fidelity, sensors);
      const gcs = Object.entries(p.gcs)
        .map(([k, v]) => `${k} ${v.count} (${v.ms.toFixed(0)} ms)`)
        .join(', ');
      console.log(
        `  ${fmt(sensors)} sensors: ${fmt(p.bytesPerSensorTick)} bytes and ${p.cpuUsPerSensorTick.toFixed(2)} µs CPU per sensor-tick; GCs in the 60 ticks: ${gcs || 'none'}`,
      );
      for (const [site, b] of p.sites) console.log(`      ${b.toFixed(1).padStart(8)}  ${site}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function probeOnce(root: string, file: string, fidelity: string, sensors: number): Probe {
  const dist = (m: string): string =>
    JSON.stringify(new URL(`../dist/${m}`, `file://${root.endsWith('/') ? root : `${root}/`}bench/`).href);
  const script = `
    import { readFileSync } from 'node:fs';
    import { Session } from 'node:inspector';
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    const { loadScenarioText } = await import(${dist('scenario/load.js')});
    const { createWorld } = await import(${dist('sim/world.js')});
    const { createTruthRecorder } = await import(${dist('sim/truth.js')});
    const { createEdgeStage } = await import(${dist('edge/sensors.js')});
    const { model } = loadScenarioText(readFileSync(${JSON.stringify(file)}, 'utf8'), ${JSON.stringify(file)}, { fidelity: ${JSON.stringify(fidelity)}, durationMs: 120000 });
    const world = createWorld(model);
    const truth = createTruthRecorder(model);
    const edge = createEdgeStage(model, { workers: 2 });
    const session = new Session();
    session.connect();
    const post = (m, p) => new Promise((ok, no) => session.post(m, p, (e, r) => (e ? no(e) : ok(r))));
    const kinds = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak' };
    const gcs = {};
    let counting = false;
    new PerformanceObserver((list) => {
      if (!counting) return;
      for (const e of list.getEntries()) {
        const k = kinds[e.detail?.kind] ?? String(e.detail?.kind);
        gcs[k] ??= { count: 0, ms: 0 };
        gcs[k].count++;
        gcs[k].ms += e.duration;
      }
    }).observe({ entryTypes: ['gc'] });
    let cpu = 0;
    for (let k = 0, t = model.startMs; k < 90; k++, t += model.tickMs) {
      if (k === 30) {
        await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
        counting = true;
        const u = process.cpuUsage();
        cpu = u.user + u.system;
      }
      const step = world.step(t);
      truth.observe(step, world);
      edge.observe(step, world);
      if ((t + model.tickMs - model.startMs) % model.batchIntervalMs === 0) {
        const packets = await edge.drain();
        packets.release?.();
      }
    }
    const u = process.cpuUsage();
    const cpuUs = u.user + u.system - cpu;
    const { profile } = await post('HeapProfiler.stopSampling', {});
    await new Promise((ok) => setTimeout(ok, 50));
    counting = false;
    await edge.close();
    const bySite = new Map();
    let total = 0;
    const walk = (n) => {
      const f = n.callFrame;
      const self = n.selfSize;
      if (self > 0) {
        const key = (f.functionName || '(anonymous)') + ' ' + f.url.replace(/^.*\\/dist\\//, '') + (f.url ? ':' + (f.lineNumber + 1) : '');
        bySite.set(key, (bySite.get(key) ?? 0) + self);
        total += self;
      }
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
    const per = (b) => b / 60 / ${sensors};
    const sites = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, b]) => [k, per(b)]);
    console.log(JSON.stringify({ bytesPerSensorTick: per(total), cpuUsPerSensorTick: cpuUs / 60 / ${sensors}, gcs, sites }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) throw new Error(`bench scale alloc: ${file} exited ${r.status}: ${r.stderr}`);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as Probe;
}
