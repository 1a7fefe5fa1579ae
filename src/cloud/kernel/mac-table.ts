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
  /**
   * Per slot two words: entry index + 1 (0 = empty) and the spelling's hash, side by side, so
   * a probe reads one cache line and a different MAC in the slot is told by its hash. At
   * 100,000 sensors the table and its spellings are larger than the caches: a lookup through
   * per-entry objects (a `Uint8Array` and a `Uint32Array` per spelling, reached through two
   * arrays of pointers) missed the cache ~6 times and cost 1.7× as much per packet as at
   * 30,000; flat arrays miss ~3 times (slot, entry, bytes).
   */
  #slots: Int32Array;
  #mask: number;
  /** Per entry: start of its spelling in #bytes, its length, its sensor index. */
  readonly #entries: Int32Array;
  #count = 0;
  /** Every interned spelling, back to back. */
  #bytes: Uint8Array;
  #view: DataView;
  #used = 0;
  readonly #limit: number;

  /** `macs[i]` is the MAC of sensor index i. */
  constructor(macs: readonly string[]) {
    this.#byLower = new Map(macs.map((m, i) => [m.toLowerCase(), i] as const));
    // Room for two spellings per sensor plus slack, at a load factor ≤ 1/4.
    this.#limit = macs.length * 2 + 64;
    let size = 16;
    while (size < this.#limit * 4) size *= 2;
    this.#slots = new Int32Array(2 * size);
    this.#mask = size - 1;
    this.#entries = new Int32Array(3 * this.#limit);
    this.#bytes = new Uint8Array(Math.max(64, macs.reduce((sum, m) => sum + m.length, 0) * 2));
    this.#view = new DataView(this.#bytes.buffer);
    const encoder = new TextEncoder();
    macs.forEach((m, i) => this.#intern(encoder.encode(m.toLowerCase()), i));
  }

  /** Sensor index of the MAC in bytes [s, e) (`v` views the same bytes), or -1 when no sensor has it. */
  lookup(b: Uint8Array, v: DataView, s: number, e: number): number {
    const len = e - s;
    const h = (len >= 8 ? hashWords(v.getUint32(e - 8, true), v.getUint32(e - 4, true), len) : hashBytes(b, s, e)) | 0;
    const slots = this.#slots;
    let slot = h & this.#mask;
    for (;;) {
      const k = slots[2 * slot] as number;
      if (k === 0) break;
      if (slots[2 * slot + 1] === h && this.#equals(k - 1, b, v, s, len))
        return this.#entries[3 * (k - 1) + 2] as number;
      slot = (slot + 1) & this.#mask;
    }
    return this.#miss(b, s, e);
  }

  #equals(entry: number, b: Uint8Array, v: DataView, s: number, len: number): boolean {
    const start = this.#entries[3 * entry] as number;
    if (this.#entries[3 * entry + 1] !== len) return false;
    const mine = this.#view;
    const words = len & ~3;
    for (let i = 0; i < words; i += 4) if (v.getUint32(s + i, true) !== mine.getUint32(start + i, true)) return false;
    const bytes = this.#bytes;
    for (let i = words; i < len; i++) if (bytes[start + i] !== b[s + i]) return false;
    return true;
  }

  #miss(b: Uint8Array, s: number, e: number): number {
    const sensor = this.#byLower.get(decoder.decode(b.subarray(s, e)).toLowerCase());
    if (sensor === undefined) return -1;
    if (this.#count < this.#limit) this.#intern(b.slice(s, e), sensor);
    return sensor;
  }

  #intern(bytes: Uint8Array, sensor: number): void {
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const len = bytes.length;
    const h =
      (len >= 8 ? hashWords(v.getUint32(len - 8, true), v.getUint32(len - 4, true), len) : hashBytes(bytes, 0, len)) |
      0;
    let slot = h & this.#mask;
    while ((this.#slots[2 * slot] as number) !== 0) slot = (slot + 1) & this.#mask;
    if (this.#used + len > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(2 * this.#bytes.length, this.#used + len));
      grown.set(this.#bytes);
      this.#bytes = grown;
      this.#view = new DataView(grown.buffer);
    }
    this.#bytes.set(bytes, this.#used);
    const entry = this.#count++;
    this.#entries[3 * entry] = this.#used;
    this.#entries[3 * entry + 1] = len;
    this.#entries[3 * entry + 2] = sensor;
    this.#used += len;
    this.#slots[2 * slot] = entry + 1;
    this.#slots[2 * slot + 1] = h;
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
