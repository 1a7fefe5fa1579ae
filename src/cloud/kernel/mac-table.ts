/**
 * MAC → sensor index for the hot path, without strings: an open-addressing table keyed by
 * the exact bytes of a MAC as it appears on the wire. MACs match case-insensitively
 * (`AssetRegistry.sensorByMac`), so a spelling not seen before is resolved once through the
 * lower-case map and then interned: a hive always spells its sensors' MACs the same way,
 * so after the first batch every lookup is one hash and one byte comparison. Unknown MACs
 * are never interned (garbage cannot grow the table).
 */
const decoder = new TextDecoder();

export class MacTable {
  readonly #byLower: ReadonlyMap<string, number>;
  /** slot → entry index + 1 (0 = empty). */
  #slots: Int32Array;
  #mask: number;
  readonly #spelling: Uint8Array[] = [];
  /** The spelling's bytes as little-endian 32-bit words (its length rounded down to 4). */
  readonly #words: Uint32Array[] = [];
  readonly #sensor: number[] = [];
  readonly #limit: number;

  /** `macs[i]` is the MAC of sensor index i. */
  constructor(macs: readonly string[]) {
    this.#byLower = new Map(macs.map((m, i) => [m.toLowerCase(), i] as const));
    // Room for two spellings per sensor plus slack, at a load factor ≤ 1/4.
    this.#limit = macs.length * 2 + 64;
    let size = 16;
    while (size < this.#limit * 4) size *= 2;
    this.#slots = new Int32Array(size);
    this.#mask = size - 1;
    macs.forEach((m, i) => this.#intern(new TextEncoder().encode(m.toLowerCase()), i));
  }

  /** Sensor index of the MAC in bytes [s, e) (`v` views the same bytes), or -1 when no sensor has it. */
  lookup(b: Uint8Array, v: DataView, s: number, e: number): number {
    const len = e - s;
    let slot = (len >= 8 ? hashWords(v.getUint32(e - 8, true), v.getUint32(e - 4, true), len) : hashBytes(b, s, e)) & this.#mask;
    for (;;) {
      const k = this.#slots[slot] as number;
      if (k === 0) break;
      if (this.#equals(k - 1, b, v, s, len)) return this.#sensor[k - 1] as number;
      slot = (slot + 1) & this.#mask;
    }
    return this.#miss(b, s, e);
  }

  #equals(entry: number, b: Uint8Array, v: DataView, s: number, len: number): boolean {
    const sp = this.#spelling[entry] as Uint8Array;
    if (sp.length !== len) return false;
    const w = this.#words[entry] as Uint32Array;
    for (let i = 0; i < w.length; i++) if (v.getUint32(s + 4 * i, true) !== w[i]) return false;
    for (let i = w.length * 4; i < len; i++) if (sp[i] !== b[s + i]) return false;
    return true;
  }

  #miss(b: Uint8Array, s: number, e: number): number {
    const sensor = this.#byLower.get(decoder.decode(b.subarray(s, e)).toLowerCase());
    if (sensor === undefined) return -1;
    if (this.#spelling.length < this.#limit) this.#intern(b.slice(s, e), sensor);
    return sensor;
  }

  #intern(bytes: Uint8Array, sensor: number): void {
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const len = bytes.length;
    let slot = (len >= 8 ? hashWords(v.getUint32(len - 8, true), v.getUint32(len - 4, true), len) : hashBytes(bytes, 0, len)) & this.#mask;
    while ((this.#slots[slot] as number) !== 0) slot = (slot + 1) & this.#mask;
    this.#spelling.push(bytes);
    this.#words.push(Uint32Array.from({ length: len >> 2 }, (_, i) => v.getUint32(4 * i, true)));
    this.#sensor.push(sensor);
    this.#slots[slot] = this.#spelling.length;
  }
}

/** Hash of the last 8 bytes (where MACs differ, read as two words) and the length. */
function hashWords(a: number, b: number, len: number): number {
  const h = Math.imul(Math.imul(a ^ len, 0x9e3779b1) ^ b, 0x85ebca6b);
  return (h ^ (h >>> 15)) >>> 0;
}

/** Hash of a MAC shorter than 8 bytes. */
function hashBytes(b: Uint8Array, s: number, e: number): number {
  let h = Math.imul(0x9e3779b1, e - s + 1);
  for (let i = Math.max(s, e - 8); i < e; i++) h = Math.imul(h ^ (b[i] as number), 0x01000193);
  return (h ^ (h >>> 15)) >>> 0;
}
