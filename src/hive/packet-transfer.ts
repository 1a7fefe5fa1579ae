import { nextEdgePacket } from '../edge/edge-packets.js';
import type { WirePacket } from '../proto/messages.js';
import { MacFields, type UplinkPackets } from '../proto/uplink-wire.js';
import type { SensorModel } from '../scenario/model.js';

/**
 * The hand-off buffer a hive thread receives is the edge's flat packets (edge/edge-packets.ts:
 * per packet sensorIndex, sensedAtMs, n, x1, y1 … or -1, intervalMs, in, out), re-indexed to
 * the thread's own sensors by the hand-off (hive-threads.ts) and transferred: no per-packet
 * objects are built or cloned across.
 */

/**
 * The detections of every packet that has none (most of a fleet's: an empty footprint), one
 * frozen array: a packet lives in its mesh and its hive's buffer until acked, and an empty
 * array each was ~16 MB of a 30,000-sensor fleet's hive thread.
 */
const NO_DETECTIONS: ReadonlyArray<readonly [number, number]> = Object.freeze([]);

/** Offset of the packet after the one at `at`. */
export const nextPacket = nextEdgePacket;

/** Handles: buffer serial × 2^32 + the packet's offset in its buffer (both exact in a double). */
const OFFSETS = 2 ** 32;
/** Serials are reused after this many buffers (one a submit: ~10^6 batch intervals before a reuse). */
const SERIALS = 2 ** 20;

/** One hand-off buffer while packets of it are in flight. */
export interface Hold {
  /** The handle of the packet at offset `at` of this buffer. */
  handle(at: number): number;
  /** One more of its packets is in flight (its handle went into a mesh). */
  sent(): void;
  /**
   * Submitting from it paused (`last` false: more slices of it follow) or ended (`last` true).
   * Forgotten at once if none of its packets are in flight; once it has ended and its last
   * packet has been taken, its `release` runs (nothing reads the buffer after that).
   */
  done(last: boolean): void;
}

interface HoldState {
  readonly serial: number;
  readonly buf: Float64Array;
  readonly release: () => void;
  live: number;
  /** Every packet of it has been submitted (`done(true)`). */
  ended: boolean;
}

/**
 * Hand-off buffers kept while their packets cross the meshes: a packet in flight is a number
 * (its handle), not an object, until it reaches its hive (`take`). A buffer is forgotten once
 * the last of its packets has been taken: a fleet's interval is one buffer, ~8 bytes a number
 * off the heap, instead of ~1 M packet objects per interval that lived long enough to be
 * promoted to the old generation and walked by every mark-compact.
 */
export class HeldPackets {
  readonly #sensors: readonly SensorModel[];
  readonly #held = new Map<number, HoldState>();
  #current: HoldState | null = null;
  #macs: MacFields | null = null;
  #serial = 0;

  /** `sensors`: the list the buffers' sensor indices point into. */
  constructor(sensors: readonly SensorModel[]) {
    this.#sensors = sensors;
  }

  /** Packets in flight, for tests and diagnostics. */
  get inFlight(): number {
    let n = 0;
    for (const h of this.#held.values()) n += h.live;
    return n;
  }

  /**
   * `buf` (again, for its next slice, while its submit has not ended) with `release`: called once
   * the submit has ended and the last of its packets has left the meshes, when nothing here will
   * read `buf` again (the caller may then reuse it: EdgePackets.release, or the hive thread's
   * hand-back in hive-worker.ts).
   */
  hold(buf: Float64Array, release: () => void): Hold {
    let h = this.#current;
    if (h?.buf !== buf) {
      const serial = this.#serial;
      if (this.#held.has(serial))
        throw new Error(`packet hand-off: buffer serial ${serial} still in flight after ${SERIALS} buffers`);
      this.#serial = (serial + 1) % SERIALS;
      h = { serial, buf, release, live: 0, ended: false };
      this.#current = h;
    }
    const state = h;
    const held = this.#held;
    return {
      handle: (at) => state.serial * OFFSETS + at,
      sent: () => {
        if (state.live++ === 0) held.set(state.serial, state);
      },
      done: (last) => {
        if (last) {
          state.ended = true;
          // A later buffer may be this one handed back and refilled: it gets a serial of its own.
          if (this.#current === state) this.#current = null;
        }
        if (state.live !== 0) return;
        held.delete(state.serial);
        if (last) state.release();
      },
    };
  }

  /**
   * The packet of `handle` written, encoded as the wire carries it, into `out` (the hive's next
   * batches): no object per packet. It leaves the held packets.
   */
  takeInto(handle: number, out: UplinkPackets): void {
    const buf = this.#release(handle);
    const at = this.#at;
    const sensor = buf[at] as number;
    if (!(sensor >= 0 && sensor < this.#sensors.length)) throw new RangeError(`packet hand-off: no sensor #${sensor}`);
    this.#macs ??= new MacFields(this.#sensors.map((s) => s.mac));
    const sensedAtMs = buf[at + 1] as number;
    const n = buf[at + 2] as number;
    if (n < 0)
      out.traffic(this.#macs, sensor, sensedAtMs, buf[at + 3] as number, buf[at + 4] as number, buf[at + 5] as number);
    else out.presence(this.#macs, sensor, sensedAtMs, buf, at + 3, n);
    this.#releaseEmptied();
  }

  /** The packet of `handle` as the wire carries it (the sensor named by its MAC); it leaves the held packets. */
  take(handle: number): WirePacket {
    const buf = this.#release(handle);
    const at = this.#at;
    const sensor = this.#sensors[buf[at] as number];
    if (!sensor) throw new RangeError(`packet hand-off: no sensor #${buf[at]}`);
    const sensedAtMs = buf[at + 1] as number;
    const n = buf[at + 2] as number;
    // Key order as toWire (delivery.ts) builds them.
    let out: WirePacket;
    if (n < 0)
      out = {
        kind: 'traffic',
        sensorMac: sensor.mac,
        sensedAtMs,
        intervalMs: buf[at + 3] as number,
        in: buf[at + 4] as number,
        out: buf[at + 5] as number,
      };
    else {
      let detections = NO_DETECTIONS;
      if (n > 0) {
        const list: Array<readonly [number, number]> = [];
        for (let k = 0, i = at + 3; k < n; k++, i += 2) list.push([buf[i] as number, buf[i + 1] as number]);
        detections = list;
      }
      out = { kind: 'presence', sensorMac: sensor.mac, sensedAtMs, detections };
    }
    this.#releaseEmptied();
    return out;
  }

  /** Offset of the packet `#release` found, in the buffer it returned. */
  #at = 0;

  /** The buffer of `handle` (its packet's offset in `#at`); one fewer of its packets in flight. */
  #release(handle: number): Float64Array {
    const serial = Math.floor(handle / OFFSETS);
    this.#at = handle - serial * OFFSETS;
    const h = this.#held.get(serial);
    if (!h) throw new Error(`packet hand-off: no buffer #${serial} in flight`);
    if (--h.live === 0) {
      this.#held.delete(serial);
      // Released by the caller once it has read the packet (a hand-back may transfer the buffer away).
      if (h.ended) this.#emptied = h;
    }
    return h.buf;
  }

  /** A buffer whose last packet `#release` gave out, released once that packet has been read. */
  #emptied: HoldState | null = null;

  #releaseEmptied(): void {
    const h = this.#emptied;
    if (h === null) return;
    this.#emptied = null;
    h.release();
  }
}
