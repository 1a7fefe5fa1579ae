import seedrandom from 'seedrandom';

/**
 * A seeded random stream. Every entity (person, sensor, link, hive) draws from its own
 * stream derived from (seed, entity id), so adding a sensor never changes another's draws
 * and results do not depend on worker count or scheduling.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number;
  /** Integer uniform in [lo, hi] inclusive. */
  int(lo: number, hi: number): number;
  /** Normal(mean, sd) by Box–Muller (one draw pair per call keeps streams simple to reason about). */
  normal(mean: number, sd: number): number;
  /** Exponential with the given mean. */
  exponential(mean: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** Uniformly chosen element; throws on an empty list. */
  pick<T>(items: readonly T[]): T;
}

class AleaRng implements Rng {
  readonly #prng: seedrandom.PRNG;

  constructor(key: string) {
    // alea: fast, good statistical quality, and exactly reproducible from a string seed.
    this.#prng = seedrandom.alea(key);
  }

  next(): number {
    return this.#prng.quick();
  }

  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  normal(mean: number, sd: number): number {
    const u1 = 1 - this.next(); // (0, 1]: log is finite
    const u2 = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }
}

/** The stream of one entity: independent of every other entity's stream. */
export function rngFor(seed: number | string, entityId: string): Rng {
  return new AleaRng(`occusim:${seed}:${entityId}`);
}
