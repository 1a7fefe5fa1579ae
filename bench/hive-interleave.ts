/**
 * `npx tsx bench/hive-interleave.ts [copies×size …]` (e.g. `1x30k 3x30k 1x100k`): the hive
 * thread's counterpart of bench/sim-interleave.ts. Each spec runs in its own process from
 * dist/ (`npm run build` first): `copies` independent fleets, each with its world, model edge
 * and one hive group of all its hives (src/hive/hive-group.ts: meshes, batching,
 * store-and-forward, the uplink's encoding) whose links ack every batch at once (no broker:
 * only the hive thread's own work is timed). Every batch interval each copy's packets are
 * submitted to its group and the group flushed; CPU µs per sensor-second of those calls alone
 * (process.cpuUsage around them: the world and the edge are not counted), over the intervals
 * after the first `WARM` (the meshes' per-link streams are made on first use).
 * Three 30k copies hold a ~90k fleet's hive state, but every mesh, hive and map in them is a
 * 30k fleet's: if 3×30k costs per sensor what 1×100k costs, the rise is the memory hierarchy.
 * `ROUNDS`, `INTERVALS`, `WARM` and `NODE_FLAGS` (e.g. `--max-semi-space-size=64`) from the environment.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fleetYaml } from './scale.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const parseSize = (s: string): number => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1);

function runSpec(file: string, copies: number, sensors: number, intervals: number, warm: number): number {
  const dist = (m: string): string => JSON.stringify(new URL(`dist/${m}`, `file://${root}/`).href);
  const script = `
    import { readFileSync } from 'node:fs';
    const { loadScenarioText } = await import(${dist('scenario/load.js')});
    const { createWorld } = await import(${dist('sim/world.js')});
    const { createEdgeStage } = await import(${dist('edge/sensors.js')});
    const { createHiveGroup } = await import(${dist('hive/hive-group.js')});
    const { FaultTimeline } = await import(${dist('mesh/faults.js')});
    const text = readFileSync(${JSON.stringify(file)}, 'utf8');
    // Links that ack every batch at once: the hive's own work, no broker.
    const link = { publish: () => Promise.resolve(), transmit: (b) => Promise.resolve(b.seq), heartbeat: () => Promise.resolve(), close: () => Promise.resolve() };
    const copies = [];
    for (let c = 0; c < ${copies}; c++) {
      const { model } = loadScenarioText(text, ${JSON.stringify(file)}, { fidelity: 'model', durationMs: 3600000 });
      const hives = model.hives.map((h) => ({ id: h.id, serial: h.serial, firmwareVersion: h.firmwareVersion, link }));
      copies.push({ model, world: createWorld(model), edge: createEdgeStage(model), group: createHiveGroup(model, hives, new FaultTimeline(model.faults)) });
    }
    const { startMs, tickMs, batchIntervalMs } = copies[0].model;
    const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
    let hive = 0;
    let measuredMs = 0;
    let interval = 0;
    for (let t = startMs; interval < ${warm + intervals}; t += tickMs) {
      for (const c of copies) c.edge.observe(c.world.step(t), c.world);
      if ((t + tickMs - startMs) % batchIntervalMs !== 0) continue;
      const flushAt = t + tickMs;
      for (const c of copies) {
        const packets = await c.edge.drain();
        const t0 = cpu();
        c.group.submit(packets);
        await c.group.flush(flushAt);
        if (interval >= ${warm}) hive += cpu() - t0;
      }
      if (interval >= ${warm}) measuredMs += batchIntervalMs;
      interval++;
    }
    console.log(String(hive / (${copies * sensors} * measuredMs / 1000)));
  `;
  const r = spawnSync(
    process.execPath,
    [...(process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean), '--input-type=module', '-e', script],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (r.status !== 0) throw new Error(`hive-interleave: ${copies}×${file} exited ${r.status}: ${r.stderr}`);
  return Number(r.stdout.trim());
}

const specs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['1x30k', '3x30k', '1x100k'];
const rounds = Number(process.env.ROUNDS ?? 2);
const intervals = Number(process.env.INTERVALS ?? 6);
const warm = Number(process.env.WARM ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'occusim-hive-interleave-'));
try {
  console.log(
    `== hive-interleave: hive groups (meshes, batching, uplink encoding; links ack at once), CPU µs per sensor-second over ${intervals} batch intervals after ${warm}, ${rounds} rounds (load average at start ${loadavg()[0]?.toFixed(1)})${process.env.NODE_FLAGS ? `, node ${process.env.NODE_FLAGS}` : ''}`,
  );
  const parsed = specs.map((s) => {
    const [c, size] = s.split('x');
    const { text, sensors } = fleetYaml(root, parseSize(size ?? '30k'));
    const file = join(dir, `fleet-${sensors}.yaml`);
    writeFileSync(file, text);
    return { spec: s, copies: Number(c), sensors, file, us: [] as number[] };
  });
  for (let r = 0; r < rounds; r++)
    for (const p of parsed) p.us.push(runSpec(p.file, p.copies, p.sensors, intervals, warm));
  for (const p of parsed) {
    console.log(
      `  ${p.spec.padEnd(8)} ${(p.copies * p.sensors).toLocaleString('en-US').padStart(9)} sensors   ${p.us.map((u) => u.toFixed(3)).join('  ')}   (min ${Math.min(...p.us).toFixed(3)})`,
    );
  }
  console.log(`  load average at end ${loadavg()[0]?.toFixed(1)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
