import type { SensorModel } from '../scenario/model.js';
import type { SensorPacket } from './packet.js';

/**
 * An interval's sensor packets as the edge hands them over: numbers in one Float64Array, not
 * an object per packet. At 100,000 model sensors an interval is ~1 M packets that lived from
 * sampling to the hand-off — long enough to be promoted to the old generation and read back
 * cold by the accuracy wrapper and the hand-off — so the run's thread's cost per sensor grew
 * with the fleet (bench/README.md, "the model edge's packets flat"). Layout per packet, the
 * same as the hive threads' hand-off buffer (hive/packet-transfer.ts), every number a double
 * so what is read back equals what was written exactly:
 *   presence: sensorIndex, sensedAtMs, n, x1, y1 … xn, yn
 *   traffic:  sensorIndex, sensedAtMs, -1, intervalMs, in, out
 * `sensorIndex` is the sensor's index in the scenario's `model.sensors`.
 */
export interface EdgePackets {
  /** The packets, exactly `data.length` numbers (the view may sit in a larger buffer: transfer `data.buffer` whole). */
  readonly data: Float64Array;
  readonly count: number;
  /**
   * Hands the buffer back to the writer that filled it, which writes a later interval into it.
   * Ownership: whoever holds the packets last (the delivery stage, once it will never read
   * `data` again) calls this once; after it nobody may read `data`. Never calling it is safe
   * (the writer allocates a new buffer instead): reusing it is what keeps a fleet's external
   * allocation, and the full GCs V8 triggers after a fixed amount of it, from growing per
   * interval with the fleet (bench/README.md, "the hand-off buffers reused").
   */
  readonly release: () => void;
}

/** Offset of the packet after the one at `at`. */
export function nextEdgePacket(data: Float64Array, at: number): number {
  const n = data[at + 2] as number;
  return at + 3 + (n < 0 ? 3 : 2 * n);
}

/** A writer's first buffer, in numbers; it grows by doubling. */
const MIN_NUMBERS = 4096;

/** Appends packets in the flat form; one a stage or a hand-off, writing interval after interval. */
export class EdgePacketWriter {
  #buf = new Float64Array(MIN_NUMBERS);
  /** A buffer handed back (`EdgePackets.release`), written into at the next `take` if big enough. */
  #spare: Float64Array<ArrayBuffer> | null = null;
  #len = 0;
  #count = 0;
  #open = -1;

  /** Starts a presence packet; `detection` appends its detections, `end` closes it. */
  presence(sensorIndex: number, sensedAtMs: number): void {
    this.#reserve(3);
    this.#open = this.#len;
    this.#buf[this.#len++] = sensorIndex;
    this.#buf[this.#len++] = sensedAtMs;
    this.#buf[this.#len++] = 0;
  }

  detection(x: number, y: number): void {
    this.#reserve(2);
    this.#buf[this.#len++] = x;
    this.#buf[this.#len++] = y;
    const n = this.#open + 2;
    this.#buf[n] = (this.#buf[n] as number) + 1;
  }

  end(): void {
    this.#open = -1;
    this.#count++;
  }

  traffic(sensorIndex: number, sensedAtMs: number, intervalMs: number, countIn: number, countOut: number): void {
    this.#reserve(6);
    const b = this.#buf;
    let i = this.#len;
    b[i++] = sensorIndex;
    b[i++] = sensedAtMs;
    b[i++] = -1;
    b[i++] = intervalMs;
    b[i++] = countIn;
    b[i++] = countOut;
    this.#len = i;
    this.#count++;
  }

  /** Copies one packet of another flat buffer (at offset `at`) in, under `sensorIndex`. */
  copy(data: Float64Array, at: number, sensorIndex: number): void {
    const end = nextEdgePacket(data, at);
    this.#reserve(end - at);
    // Number by number: a `subarray` view per packet (~1 M an interval at 100,000 sensors) was garbage.
    const b = this.#buf;
    let i = this.#len;
    b[i++] = sensorIndex;
    for (let k = at + 1; k < end; k++) b[i++] = data[k] as number;
    this.#len = i;
    this.#count++;
  }

  /**
   * The packets written so far, in a buffer of their own (it may be transferred or held); the
   * writer starts over in the buffer last handed back (`release`) if it holds an interval like
   * this one, else in a new one sized for it. The buffer is handed over, not copied: at 100,000
   * sensors an interval is tens of MB, and copying it (a fresh allocation plus the copy, each
   * drain) showed in the run's thread's profile.
   */
  take(): EdgePackets {
    const buf = this.#buf;
    const len = this.#len;
    const count = this.#count;
    const spare = this.#spare;
    this.#spare = null;
    // A handed-back buffer is taken if it holds this interval with a little room (a fleet's
    // intervals differ by a few packets; a new buffer gets 1/8 spare, so demanding that much of
    // a reused one refused nearly every one). Only the numbers below `#len` are ever read back,
    // so what a reused buffer held before does not matter.
    this.#buf =
      spare !== null && spare.length >= Math.max(MIN_NUMBERS, len + (len >> 5))
        ? spare
        : new Float64Array(Math.max(MIN_NUMBERS, len + (len >> 3)));
    this.#len = 0;
    this.#count = 0;
    let released = false;
    return {
      data: buf.subarray(0, len),
      count,
      release: () => {
        if (released) throw new Error('edge packets: buffer released twice');
        released = true;
        this.recycle(buf);
      },
    };
  }

  /**
   * A buffer nobody reads any more (one this writer or one of its kind handed out, and got back,
   * e.g. from a thread it was transferred to), for a later `take` to write into.
   */
  recycle(buf: Float64Array<ArrayBuffer>): void {
    if (buf === this.#buf) throw new Error('edge packets: the buffer being written was recycled');
    if (this.#spare === null || buf.length > this.#spare.length) this.#spare = buf;
  }

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = new Float64Array(Math.max(this.#buf.length * 2, this.#len + n));
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }
}

/** Domain packets in the flat form (tests, and callers that build packets one by one); `indexOf` gives a packet's sensor index. */
export function packEdgePackets(
  packets: readonly SensorPacket[],
  indexOf: (sensorId: string) => number | undefined,
): EdgePackets {
  const w = new EdgePacketWriter();
  for (const p of packets) {
    const i = indexOf(p.sensorId);
    if (i === undefined) throw new RangeError(`edge packets: no sensor ${p.sensorId}`);
    if (p.kind === 'traffic') {
      w.traffic(i, p.sensedAtMs, p.intervalMs, p.in, p.out);
      continue;
    }
    w.presence(i, p.sensedAtMs);
    for (const [x, y] of p.detections) w.detection(x, y);
    w.end();
  }
  return w.take();
}

/** The flat packets as domain objects, in order (tests and diagnostics: the run never builds them). */
export function unpackEdgePackets(packets: EdgePackets, sensors: readonly SensorModel[]): SensorPacket[] {
  const out: SensorPacket[] = [];
  const d = packets.data;
  for (let at = 0; at < d.length; at = nextEdgePacket(d, at)) {
    const sensor = sensors[d[at] as number];
    if (!sensor) throw new RangeError(`edge packets: no sensor #${d[at]}`);
    const sensedAtMs = d[at + 1] as number;
    const n = d[at + 2] as number;
    if (n < 0) {
      out.push({
        kind: 'traffic',
        sensorId: sensor.id,
        sensedAtMs,
        intervalMs: d[at + 3] as number,
        in: d[at + 4] as number,
        out: d[at + 5] as number,
      });
      continue;
    }
    const detections: Array<readonly [number, number]> = [];
    for (let k = 0, i = at + 3; k < n; k++, i += 2) detections.push([d[i] as number, d[i + 1] as number]);
    out.push({ kind: 'presence', sensorId: sensor.id, sensedAtMs, detections });
  }
  return out;
}
