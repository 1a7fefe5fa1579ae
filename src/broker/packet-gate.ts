import { Duplex, Transform, pipeline, type TransformCallback } from 'node:stream';
import type { Socket } from 'node:net';

/**
 * Packet sizes enforced while the bytes arrive, before Aedes sees them. mqtt-packet (the
 * parser inside Aedes 1.x) has no size limit: it buffers a packet's whole announced
 * Remaining Length before emitting it, so one unauthenticated CONNECT announcing 255 MiB
 * could make the broker hold 255 MiB (twice, while concatenating), and a PUBLISH was only
 * measured against the payload limit after it had been read in full. The gate reads each
 * fixed header as it goes by (§2.2: one type byte, then the Remaining Length as 1–4 bytes of
 * 7-bit groups) and closes the connection the moment an announced length is over its bound.
 * It never copies: bytes are passed on unchanged, only headers are looked at.
 */
export interface PacketGateLimits {
  /** Largest Remaining Length of the first packet (the CONNECT, sent before authentication). */
  maxConnectBytes: number;
  /** Largest Remaining Length of any later packet. */
  maxPacketBytes: number;
}

/** Why a connection was closed: an announced size over the bound, or a malformed length. */
export type GateRefusal = { kind: 'connect-too-large' | 'packet-too-large' | 'malformed-length'; announced: number };

/**
 * A CONNECT carries a client id, a user name, a password and maybe a will: a hive's is under
 * 200 bytes. 16 KiB leaves room for long credentials and a small will while refusing a
 * flood before any authentication runs.
 */
export const DEFAULT_MAX_CONNECT_BYTES = 16 * 1024;

/** Bytes of a PUBLISH around its payload: topic length (2) + topic (≤ 65535) + packet id (2). */
export const PUBLISH_OVERHEAD_BYTES = 2 + 65_535 + 2;

// Scanner states: expecting a fixed header's type byte, its Remaining Length, or body bytes.
const State = { Type: 0, Length: 1, Body: 2 } as const;
type State = (typeof State)[keyof typeof State];

/** Scans a stream of MQTT packets for their fixed headers; the limits apply per packet. */
export class PacketScanner {
  #state: State = State.Type;
  #length = 0;
  #multiplier = 1;
  #lengthBytes = 0;
  #remaining = 0;
  #packets = 0;

  readonly #limits: PacketGateLimits;

  constructor(limits: PacketGateLimits) {
    this.#limits = limits;
  }

  /** The refusal the chunk triggers, or null when every header seen so far is within bounds. */
  scan(chunk: Uint8Array): GateRefusal | null {
    let i = 0;
    while (i < chunk.length) {
      if (this.#state === State.Body) {
        const take = Math.min(this.#remaining, chunk.length - i);
        this.#remaining -= take;
        i += take;
        if (this.#remaining === 0) this.#state = State.Type;
        continue;
      }
      const byte = chunk[i++] as number;
      if (this.#state === State.Type) {
        this.#state = State.Length;
        this.#length = 0;
        this.#multiplier = 1;
        this.#lengthBytes = 0;
        continue;
      }
      const refusal = this.#lengthByte(byte);
      if (refusal !== null) return refusal;
    }
    return null;
  }

  #lengthByte(byte: number): GateRefusal | null {
    this.#length += (byte & 0x7f) * this.#multiplier;
    this.#multiplier *= 128;
    this.#lengthBytes++;
    const limit = this.#packets === 0 ? this.#limits.maxConnectBytes : this.#limits.maxPacketBytes;
    // Refuse as soon as the digits read so far already exceed the bound, not after the 4th byte.
    if (this.#length > limit)
      return { kind: this.#packets === 0 ? 'connect-too-large' : 'packet-too-large', announced: this.#length };
    if ((byte & 0x80) !== 0) {
      // §2.2.3: at most four bytes; a fifth continuation is malformed.
      return this.#lengthBytes >= 4 ? { kind: 'malformed-length', announced: this.#length } : null;
    }
    this.#packets++;
    this.#remaining = this.#length;
    this.#state = this.#length === 0 ? State.Type : State.Body;
    return null;
  }
}

/**
 * Wraps a client socket for Aedes: reads pass through a `PacketScanner`, writes go straight
 * to the socket. On a refusal the socket is destroyed at once (MQTT 3.1.1 has no way to tell
 * the client why, [MQTT-4.8.0-1]) and `onRefuse` is told.
 */
export function gatedConnection(socket: Socket, limits: PacketGateLimits, onRefuse: (r: GateRefusal) => void): Duplex {
  const scanner = new PacketScanner(limits);
  const gate = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback): void {
      const refusal = scanner.scan(chunk);
      if (refusal === null) return done(null, chunk);
      onRefuse(refusal);
      socket.destroy();
      done(new Error(`mqtt: ${refusal.kind} (announced ${refusal.announced} bytes)`));
    },
  });
  // pipeline destroys the socket when the gate fails and the gate when the socket does.
  pipeline(socket, gate, () => {});
  return Duplex.from({ readable: gate, writable: socket });
}
