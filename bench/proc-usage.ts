import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU and memory of other processes, read from Linux's /proc, for the benches that run several
 * programs (occusim processes, mosquitto, PostgreSQL). A process tree is a root and its direct
 * children (PostgreSQL's postmaster and its backends): its CPU is the root's own, plus what its
 * reaped children used (`cutime`/`cstime`, counted by the kernel when the root waits for them),
 * plus its live children's own. Sampled every `everyMs`, so a process's last sample is at most
 * that old when it exits.
 */
const TICK_MS = 10; // USER_HZ: /proc reports CPU in 1/100 s on Linux, whatever the kernel's HZ.

interface Stat {
  ppid: number;
  /** utime + stime, ms. */
  ownMs: number;
  /** cutime + cstime (reaped children), ms. */
  childrenMs: number;
  rssKb: number;
}

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number): number => Number(f[i - 3]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    return {
      ppid: n(4),
      ownMs: (n(14) + n(15)) * TICK_MS,
      childrenMs: (n(16) + n(17)) * TICK_MS,
      rssKb: rss ? Number(rss[1]) : 0,
    };
  } catch {
    return null; // gone
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    if (stat(Number(name))?.ppid === pid) out.push(Number(name));
  }
  return out;
}

export interface Usage {
  /** CPU ms since the sampler started. */
  cpuMs: number;
  /** The largest sum of the tree's resident sets seen in one sample, MB (shared pages counted in each process). */
  peakRssMb: number;
}

/** Samples named process trees until stopped; `usage()` at any time. */
export class ProcessSampler {
  readonly #trees = new Map<string, { pid: number; tree: boolean }>();
  readonly #base = new Map<string, number>();
  readonly #last = new Map<string, Usage>();
  #timer: NodeJS.Timeout | null = null;

  constructor(everyMs = 500) {
    this.#timer = setInterval(() => this.sample(), everyMs);
    this.#timer.unref();
  }

  /** Follows `pid` (and its children when `tree`) from now on. */
  add(name: string, pid: number | undefined, tree = false): void {
    if (pid === undefined) throw new Error(`bench: ${name} has no process id`);
    this.#trees.set(name, { pid, tree });
    this.#base.set(name, this.#cpu(pid, tree) ?? 0);
    this.#last.set(name, { cpuMs: 0, peakRssMb: 0 });
  }

  #cpu(pid: number, tree: boolean): number | null {
    const root = stat(pid);
    if (root === null) return null;
    let ms = root.ownMs + (tree ? root.childrenMs : 0);
    if (tree) for (const c of childrenOf(pid)) ms += stat(c)?.ownMs ?? 0;
    return ms;
  }

  #rssKb(pid: number, tree: boolean): number {
    let kb = stat(pid)?.rssKb ?? 0;
    if (tree) for (const c of childrenOf(pid)) kb += stat(c)?.rssKb ?? 0;
    return kb;
  }

  sample(): void {
    for (const [name, { pid, tree }] of this.#trees) {
      const cpu = this.#cpu(pid, tree);
      if (cpu === null) continue; // exited: its last sample stands
      const last = this.#last.get(name) as Usage;
      this.#last.set(name, {
        cpuMs: cpu - (this.#base.get(name) ?? 0),
        peakRssMb: Math.max(last.peakRssMb, this.#rssKb(pid, tree) / 1024),
      });
    }
  }

  usage(name: string): Usage {
    return this.#last.get(name) ?? { cpuMs: 0, peakRssMb: 0 };
  }

  stop(): void {
    this.sample();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
