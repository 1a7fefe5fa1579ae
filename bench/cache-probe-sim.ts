/**
 * `npx tsx bench/cache-probe-sim.ts [sizes] [rounds]` (default `29795,99990 5`): does this machine
 * alone make the same work per item dearer on a 100k fleet's working set than on a 30k fleet's?
 *
 * A kernel per thread with that thread's dominant access pattern, over typed arrays of the byte
 * sizes the thread's per-sensor state has (bench/README.md, "session 7, why-sim": the main
 * thread's heap per sensor measured by bench/sim-interleave.ts, the hive thread's from its heap
 * profile), no JavaScript objects, no maps, no allocation, nothing whose cost per item depends
 * on the item count in the code — so any rise of the cost per item with the size is the memory
 * hierarchy's (caches, TLB), not the code's:
 *
 * - `main`: per sensor a record of `MAIN_BYTES`, read at `MAIN_LINES` cache lines of it, each
 *   address taken from the previous line's content (a chain of dependent loads, as an object's
 *   fields lead to its footprint, its random stream, its figures), a little arithmetic, one
 *   write; sensors visited in index order once a "tick", the records laid out in that order
 *   (as the objects were allocated), and the same with the records in a shuffled place each
 *   (objects spread over the heap).
 * - `hive`: per packet, the hand-off buffer read in order (8 doubles), then its sensor's mesh
 *   node's state (`HIVE_BYTES` a sensor: queue, busy time, link streams and statistics) at
 *   `HIVE_LINES` lines, and its hive's uplink buffer appended to (24 bytes); packets in sensor
 *   order, hives' state in hive order — and the same with the sensors' state shuffled.
 * - `stream`: every byte of a fleet-sized array summed in order (what a prefetcher handles best).
 *
 * CPU ns per item (process.cpuUsage over the passes after one warm-up pass), best of `rounds`, and the ratio of the
 * largest size's to the smallest's: ~1.0 means this machine charges the same per item at
 * both sizes; above that is what the hierarchy alone adds.
 */
import { loadavg } from 'node:os';

/** Hot bytes per sensor of the main thread's state (sensor objects, streams, footprints, accuracy figures, model records). */
const MAIN_BYTES = Number(process.env.MAIN_BYTES ?? 1024);
const MAIN_LINES = Number(process.env.MAIN_LINES ?? 8);
/** Hot bytes per sensor of the hive thread's mesh state. */
const HIVE_BYTES = Number(process.env.HIVE_BYTES ?? 512);
const HIVE_LINES = Number(process.env.HIVE_LINES ?? 4);
/** Sensors a hive (fleet.yaml's floor: 101 sensors, 2 hives). */
const PER_HIVE = 50;
const LINE = 64;
/** Simple arithmetic per line touched (a few ns: the compute between loads). */
const WORK = Number(process.env.WORK ?? 8);

/** A deterministic shuffle (xorshift32, fixed seed): the layout, not the result, depends on it. */
function shuffled(n: number, seed: number): Int32Array {
  const p = Int32Array.from({ length: n }, (_, i) => i);
  let s = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    const j = (s >>> 0) % (i + 1);
    const t = p[i] as number;
    p[i] = p[j] as number;
    p[j] = t;
  }
  return p;
}

/**
 * Records of `bytes` each (a multiple of 64), item i's at `place[i]`; each record's lines hold,
 * at their first int, the offset (in ints) of the next line to read, so reads are dependent.
 */
function records(
  n: number,
  bytes: number,
  lines: number,
  place: Int32Array | null,
): { mem: Int32Array; base: Int32Array } {
  const ints = bytes / 4;
  const mem = new Int32Array(n * ints);
  const base = new Int32Array(n);
  const step = Math.max(1, Math.floor(bytes / LINE / lines)) * (LINE / 4);
  for (let i = 0; i < n; i++) {
    const b = (place ? (place[i] as number) : i) * ints;
    base[i] = b;
    for (let k = 0; k < lines; k++) mem[b + k * step] = k + 1 < lines ? b + (k + 1) * step : -1;
  }
  return { mem, base };
}

/** One tick of the main thread's pattern: every sensor's record, a chain of `lines` loads, some arithmetic, one store. */
function mainPass(mem: Int32Array, base: Int32Array, work: number): number {
  let acc = 0;
  for (let i = 0; i < base.length; i++) {
    let at = base[i] as number;
    let x = i;
    while (at >= 0) {
      const next = mem[at] as number;
      x = (x + (mem[at + 1] as number)) | 0;
      for (let w = 0; w < work; w++) x = (x * 1103515245 + 12345) | 0;
      at = next;
    }
    mem[(base[i] as number) + 1] = x & 0xff;
    acc = (acc + x) | 0;
  }
  return acc;
}

/**
 * One interval of the hive thread's pattern: the hand-off buffer in order (8 doubles a packet),
 * the sensor's mesh state (a chain of `lines` loads and a store), an append to its hive's uplink.
 */
function hivePass(
  handoff: Float64Array,
  mem: Int32Array,
  base: Int32Array,
  uplink: Float64Array,
  work: number,
): number {
  let acc = 0;
  const n = base.length;
  for (let i = 0; i < n; i++) {
    const sensor = handoff[8 * i] as number;
    let at = base[sensor] as number;
    let x = (handoff[8 * i + 1] as number) | 0;
    while (at >= 0) {
      const next = mem[at] as number;
      x = (x + (mem[at + 1] as number)) | 0;
      for (let w = 0; w < work; w++) x = (x * 1103515245 + 12345) | 0;
      at = next;
    }
    mem[(base[sensor] as number) + 1] = x & 0xff;
    const hive = (sensor / PER_HIVE) | 0;
    const slot = 3 * (hive * PER_HIVE + (sensor % PER_HIVE));
    uplink[slot] = sensor;
    uplink[slot + 1] = x;
    uplink[slot + 2] = handoff[8 * i + 2] as number;
    acc = (acc + x) | 0;
  }
  return acc;
}

function streamPass(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] as number;
  return s;
}

/** CPU ns per item of `pass` over `items` items, after one warm-up pass, passes until ~0.3 s of CPU. */
function perItem(items: number, pass: () => number): number {
  let sink = pass();
  const cpu = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) * 1000;
  };
  const t0 = cpu();
  let passes = 0;
  while (cpu() - t0 < 3e8 || passes < 3) {
    sink = (sink + pass()) | 0;
    passes++;
  }
  if (sink === 0x7fffffff) console.log('');
  return (cpu() - t0) / passes / items;
}

interface Case {
  name: string;
  /** Builds the case for `n` sensors and returns its pass. */
  make(n: number): () => number;
}

const CASES: Case[] = [
  {
    name: `main: ${MAIN_BYTES} B a sensor, ${MAIN_LINES} dependent lines, in visiting order`,
    make: (n) => {
      const { mem, base } = records(n, MAIN_BYTES, MAIN_LINES, null);
      return () => mainPass(mem, base, WORK);
    },
  },
  {
    name: `main: the same, records shuffled over the region`,
    make: (n) => {
      const { mem, base } = records(n, MAIN_BYTES, MAIN_LINES, shuffled(n, 7));
      return () => mainPass(mem, base, WORK);
    },
  },
  {
    name: `hive: hand-off in order, ${HIVE_BYTES} B of mesh state a sensor at ${HIVE_LINES} lines, uplink appends`,
    make: (n) => {
      const handoff = new Float64Array(8 * n);
      for (let i = 0; i < n; i++) {
        handoff[8 * i] = i;
        handoff[8 * i + 1] = 1e6 + i;
        handoff[8 * i + 2] = -1;
      }
      const { mem, base } = records(n, HIVE_BYTES, HIVE_LINES, null);
      const uplink = new Float64Array(3 * n + 3 * PER_HIVE);
      return () => hivePass(handoff, mem, base, uplink, WORK);
    },
  },
  {
    name: `hive: the same, mesh state shuffled over the region`,
    make: (n) => {
      const handoff = new Float64Array(8 * n);
      for (let i = 0; i < n; i++) {
        handoff[8 * i] = i;
        handoff[8 * i + 1] = 1e6 + i;
        handoff[8 * i + 2] = -1;
      }
      const { mem, base } = records(n, HIVE_BYTES, HIVE_LINES, shuffled(n, 11));
      const uplink = new Float64Array(3 * n + 3 * PER_HIVE);
      return () => hivePass(handoff, mem, base, uplink, WORK);
    },
  },
  {
    name: `stream: ${MAIN_BYTES} B a sensor summed in order`,
    make: (n) => {
      const a = new Float64Array((n * MAIN_BYTES) / 8);
      return () => streamPass(a) | 0;
    },
  },
];

const sizes = (process.argv[2] ?? '29795,99990')
  .split(',')
  .map((s) => Number(s.replace(/k$/i, '')) * (/k$/i.test(s) ? 1000 : 1));
const rounds = Number(process.argv[3] ?? 5);
console.log(
  `== cache-probe-sim: CPU ns per sensor, best of ${rounds} rounds, sizes ${sizes.map((n) => n.toLocaleString('en-US')).join(', ')} (WORK ${WORK}; load average at start ${loadavg()[0]?.toFixed(1)})`,
);
for (const c of CASES) {
  const best = sizes.map(() => Infinity);
  for (let r = 0; r < rounds; r++) {
    sizes.forEach((n, k) => {
      const pass = c.make(n);
      best[k] = Math.min(best[k] as number, perItem(n, pass));
    });
  }
  const mb = (n: number): string =>
    `${Math.round((n * (c.name.startsWith('hive') ? HIVE_BYTES : MAIN_BYTES)) / 2 ** 20)} MiB`;
  const cells = sizes
    .map((n, k) => `${n.toLocaleString('en-US')} (${mb(n)}): ${(best[k] as number).toFixed(2)}`)
    .join('   ');
  console.log(
    `  ${c.name}\n      ${cells}   ratio ${((best[best.length - 1] as number) / (best[0] as number)).toFixed(2)}`,
  );
}
console.log(`  load average at end ${loadavg()[0]?.toFixed(1)}`);
