/**
 * `npx tsx bench/cache-probe.ts [sizes] [rounds]`: is a per-sensor cost that rises from 30k to
 * 100k sensors the machine's (the memory hierarchy) or ours? The same few operations per sensor
 * over structures sized like the platform thread's at each fleet size, in the platform's
 * access order (a hive's sensors together, hives in a shuffled order, as batches arrive):
 *
 * - `map`: a `Map` from a hash-like sensor id to a small object, read and updated (the
 *   registry's and the pipeline's per-sensor lookups);
 * - `flat`: random touches of a `Float64Array` with a row of 8 doubles per sensor (the
 *   kernels' flat per-sensor tables);
 * - `pages`: the same touches with a 4 KB row per sensor, so each sensor's state is on a page
 *   of its own (the platform thread's heap and external memory at 100k are ~400 + ~300 MB,
 *   ~4–7 KB a sensor: the run's per-sensor state is spread that thin) — working sets of
 *   123 MB and 410 MB, both far beyond the 32 MiB L3; what differs is how much of them the
 *   TLBs and the caches holding the page tables still cover.
 *
 * `flat` at 8 doubles a sensor is the control: 0.8, 2.4 and 8 MB, inside the 32 MiB L3 on
 * paper (shared with every other process on the machine).
 *
 * The work per sensor is the same at every size; only the working set grows. It prints ns per
 * sensor per size and the ratio of each size to the first. Sizes alternate in every round so a
 * loaded machine disturbs both alike; CPU time (one JavaScript thread), not wall time. A thread
 * of the run whose per-sensor work is a fraction f of such touches rises by 1 + f × (ratio − 1)
 * between the sizes from the machine alone: set beside the run's per-thread rise, this says how
 * much of it the memory hierarchy explains (bench/README.md, "why-platform").
 */
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';

const SENSORS_PER_HIVE = 37;
const ROW = 8;
const PAGE_DOUBLES = 512;

/** A deterministic 32-bit mix (bench data only). */
function mix(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

interface Row {
  seen: number;
  count: number;
  x: number;
  y: number;
}

interface World {
  sensors: number;
  ids: string[];
  order: Int32Array;
  map: Map<string, Row>;
  flat: Float64Array;
  pages: Float64Array;
}

function build(sensors: number): World {
  const ids = Array.from(
    { length: sensors },
    (_, i) => `sensor_${mix(i).toString(16).padStart(8, '0')}${mix(~i).toString(16).padStart(8, '0')}`,
  );
  const hives = Math.ceil(sensors / SENSORS_PER_HIVE);
  const order = new Int32Array(hives);
  for (let h = 0; h < hives; h++) order[h] = h;
  // Fisher–Yates with the mix as the stream: hives arrive in no particular order.
  for (let h = hives - 1; h > 0; h--) {
    const j = mix(h * 2654435761) % (h + 1);
    const t = order[h] as number;
    order[h] = order[j] as number;
    order[j] = t;
  }
  const map = new Map<string, Row>();
  for (let i = 0; i < sensors; i++) map.set(ids[i] as string, { seen: 0, count: 0, x: i, y: -i });
  // Filled, so every page is mapped before the first round.
  return {
    sensors,
    ids,
    order,
    map,
    flat: new Float64Array(sensors * ROW),
    pages: new Float64Array(sensors * PAGE_DOUBLES).fill(1),
  };
}

type Probe = (w: World, round: number) => number;

const probes: Record<string, Probe> = {
  map(w, round) {
    let acc = 0;
    for (const h of w.order) {
      const end = Math.min(w.sensors, (h + 1) * SENSORS_PER_HIVE);
      for (let i = h * SENSORS_PER_HIVE; i < end; i++) {
        const r = w.map.get(w.ids[i] as string) as Row;
        r.seen = round;
        acc += r.count++;
      }
    }
    return acc;
  },
  flat(w, round) {
    let acc = 0;
    const f = w.flat;
    // Sensor rows in hash order (ids are hashes, so a hive's sensors are scattered in the table).
    for (const h of w.order) {
      const end = Math.min(w.sensors, (h + 1) * SENSORS_PER_HIVE);
      for (let i = h * SENSORS_PER_HIVE; i < end; i++) {
        const k = (mix(i) % w.sensors) * ROW;
        f[k] = round;
        acc += f[k + 1] = (f[k + 1] as number) + 1;
      }
    }
    return acc;
  },
  pages(w, round) {
    let acc = 0;
    const f = w.pages;
    for (const h of w.order) {
      const end = Math.min(w.sensors, (h + 1) * SENSORS_PER_HIVE);
      for (let i = h * SENSORS_PER_HIVE; i < end; i++) {
        const k = (mix(i) % w.sensors) * PAGE_DOUBLES;
        f[k] = round;
        acc += f[k + 1] = (f[k + 1] as number) + 1;
      }
    }
    return acc;
  },
};

const parseSize = (s: string): number => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1);

function main(): void {
  const sizes = (process.argv[2] ?? '30k,100k').split(',').map(parseSize);
  const rounds = Number(process.argv[3] ?? 15);
  console.log(
    `== cache probe: ns of CPU per sensor, ${rounds} rounds, sizes alternated (load average ${loadavg()[0]?.toFixed(1)})`,
  );
  const worlds = sizes.map(build);
  const cpu = new Map<string, number[]>();
  let sink = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [name, probe] of Object.entries(probes)) {
      for (const w of worlds) {
        // Enough passes that each measurement is ~10^6 sensors.
        const passes = Math.max(1, Math.round(1e6 / w.sensors));
        const t0 = process.cpuUsage();
        const w0 = performance.now();
        for (let p = 0; p < passes; p++) sink += probe(w, round * passes + p);
        const used = process.cpuUsage(t0);
        const wall = performance.now() - w0;
        // The first round warms the JIT and the caches: not counted.
        if (round === 0) continue;
        const key = `${name} ${w.sensors}`;
        const ns = (1000 * Math.min(used.user + used.system, wall * 1000)) / (passes * w.sensors);
        cpu.set(key, [...(cpu.get(key) ?? []), ns]);
      }
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log(
    `  probe   ${sizes.map((s) => `${s.toLocaleString('en-US').padStart(9)} sensors`).join('  ')}   ratio to the first size`,
  );
  for (const name of Object.keys(probes)) {
    const ns = worlds.map((w) => median(cpu.get(`${name} ${w.sensors}`) ?? [0]));
    const base = ns[0] as number;
    console.log(
      `  ${name.padEnd(6)}  ${ns.map((v) => `${v.toFixed(1).padStart(10)} ns    `).join('  ')}   ${ns.map((v) => (v / base).toFixed(2)).join(' / ')}`,
    );
  }
  if (sink === 42) console.log('');
}

main();
