import type { SensorPacket } from '../edge/packet.js';
import type { SensorModel } from '../scenario/model.js';

/**
 * Sensor packets as one Float64Array, to hand an interval's packets to a hive thread in one
 * transferable buffer (no per-packet objects are cloned across). Every number is kept as a
 * double, so a decoded packet equals the encoded one exactly. Layout per packet:
 *   presence: sensorIndex, sensedAtMs, n, x1, y1 … xn, yn
 *   traffic:  sensorIndex, sensedAtMs, -1, intervalMs, in, out
 */
export class PacketWriter {
  #buf = new Float64Array(1024);
  #len = 0;

  get count(): number {
    return this.#len;
  }

  write(p: SensorPacket, sensorIndex: number): void {
    if (p.kind === 'presence') {
      this.#reserve(3 + 2 * p.detections.length);
      this.#push(sensorIndex, p.sensedAtMs, p.detections.length);
      for (const [x, y] of p.detections) this.#push2(x, y);
    } else {
      this.#reserve(6);
      this.#push(sensorIndex, p.sensedAtMs, -1);
      this.#push(p.intervalMs, p.in, p.out);
    }
  }

  /** The packets written so far (a copy the size of what was written: its buffer can be transferred). */
  take(): Float64Array {
    const out = this.#buf.slice(0, this.#len);
    this.#len = 0;
    return out;
  }

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = new Float64Array(Math.max(this.#buf.length * 2, this.#len + n));
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  #push(a: number, b: number, c: number): void {
    this.#buf[this.#len++] = a;
    this.#buf[this.#len++] = b;
    this.#buf[this.#len++] = c;
  }

  #push2(a: number, b: number): void {
    this.#buf[this.#len++] = a;
    this.#buf[this.#len++] = b;
  }
}

/**
 * The detections of every packet that has none (most of a fleet's: an empty footprint), one
 * frozen array: a packet lives in its mesh and its hive's buffer until acked, and an empty
 * array each was ~16 MB of a 30,000-sensor fleet's hive thread.
 */
const NO_DETECTIONS: ReadonlyArray<readonly [number, number]> = Object.freeze([]);

/** The packets `PacketWriter` wrote, in the same order; `sensors` is the sensor list the indices point into (the thread's own). */
export function readPackets(buf: Float64Array, sensors: readonly SensorModel[]): SensorPacket[] {
  return readSome(buf, sensors, 0, Number.POSITIVE_INFINITY).packets;
}

/** The same packets, in order, `size` at a time (a fleet's interval is ~1 M packets: its receiver can yield between slices). */
export function* packetSlices(buf: Float64Array, sensors: readonly SensorModel[], size: number): Generator<SensorPacket[]> {
  for (let at = 0; at < buf.length; ) {
    const slice = readSome(buf, sensors, at, size);
    at = slice.next;
    yield slice.packets;
  }
}

function readSome(buf: Float64Array, sensors: readonly SensorModel[], from: number, max: number): { packets: SensorPacket[]; next: number } {
  const out: SensorPacket[] = [];
  let i = from;
  while (i < buf.length && out.length < max) {
    const sensor = sensors[buf[i] as number];
    if (!sensor) throw new RangeError(`packet hand-off: no sensor #${buf[i]}`);
    const sensedAtMs = buf[i + 1] as number;
    const n = buf[i + 2] as number;
    i += 3;
    if (n < 0) {
      out.push({ kind: 'traffic', sensorId: sensor.id, sensedAtMs, intervalMs: buf[i] as number, in: buf[i + 1] as number, out: buf[i + 2] as number });
      i += 3;
      continue;
    }
    let detections = NO_DETECTIONS;
    if (n > 0) {
      const list: Array<readonly [number, number]> = [];
      for (let k = 0; k < n; k++, i += 2) list.push([buf[i] as number, buf[i + 1] as number]);
      detections = list;
    }
    out.push({ kind: 'presence', sensorId: sensor.id, sensedAtMs, detections });
  }
  return { packets: out, next: i };
}
