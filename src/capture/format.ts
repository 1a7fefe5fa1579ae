import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { AppError, ErrorCodes } from '../core/errors.js';
import { PROTOCOL_MINOR, PROTOCOL_PACKAGE } from '../proto/limits.js';

/**
 * The `.occap` capture format (docs/protocol.md §Captures): the magic `OCCAP01\n`, then
 * frames, each a 4-byte big-endian length and one MessagePack record. The first record is
 * the header (protocol version, scenario, hives and their sensors); every further record is
 * one MQTT message as the broker accepted it: index, simulated time, topic, payload.
 */
export const CAPTURE_MAGIC = Buffer.from('OCCAP01\n', 'latin1');
export const CAPTURE_FORMAT = 'occusim-capture';

export interface CaptureHeader {
  format: typeof CAPTURE_FORMAT;
  formatVersion: 1;
  /** Protocol package, e.g. occusim.v1, and the recorder's minor version. */
  protocol: string;
  protocolMinor: number;
  scenario: string;
  seed: number;
  startMs: number;
  /** Each hive and the MACs of its sensors (for the "known sensor" rule). */
  hives: Array<{ serial: string; sensors: string[] }>;
}

export interface CapturedMessage {
  /** 0-based position in the capture. */
  i: number;
  /** Simulated time, epoch ms: when its sender says it sent it, else when the broker accepted it (recorder.ts, `capturedAt`). */
  t: number;
  topic: string;
  payload: Uint8Array;
}

// Records as plain maps (no msgpackr record extension), so any MessagePack reader can read them.
const packr = new Packr({ useRecords: false, mapsAsObjects: true });

export function captureHeader(
  fields: Omit<CaptureHeader, 'format' | 'formatVersion' | 'protocol' | 'protocolMinor'>,
): CaptureHeader {
  return {
    format: CAPTURE_FORMAT,
    formatVersion: 1,
    protocol: PROTOCOL_PACKAGE,
    protocolMinor: PROTOCOL_MINOR,
    ...fields,
  };
}

function frame(record: unknown): Buffer {
  const body = packr.pack(record);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
}

/** Appends messages to a capture file as they come (synchronous writes: nothing buffered is lost on a crash). */
export class CaptureWriter {
  readonly #fd: number;
  #count = 0;

  constructor(path: string, header: CaptureHeader) {
    try {
      this.#fd = openSync(path, 'w');
    } catch (err) {
      throw new AppError(ErrorCodes.USAGE, `cannot write capture ${path}: ${(err as Error).message}`, { cause: err });
    }
    writeSync(this.#fd, Buffer.concat([CAPTURE_MAGIC, frame(header)]));
  }

  get count(): number {
    return this.#count;
  }

  write(t: number, topic: string, payload: Uint8Array): void {
    writeSync(this.#fd, frame({ i: this.#count++, t, topic, payload: Buffer.from(payload) }));
  }

  close(): void {
    closeSync(this.#fd);
  }
}

export function encodeCapture(header: CaptureHeader, messages: readonly Omit<CapturedMessage, 'i'>[]): Buffer {
  return Buffer.concat([
    CAPTURE_MAGIC,
    frame(header),
    ...messages.map((m, i) => frame({ i, t: m.t, topic: m.topic, payload: Buffer.from(m.payload) })),
  ]);
}

/** Reads a whole capture; a truncated or corrupted file is an AppError CAPTURE_INVALID naming the byte offset and message. */
export function readCapture(path: string): { header: CaptureHeader; messages: CapturedMessage[] } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new AppError(ErrorCodes.USAGE, `cannot read capture ${path}: ${(err as Error).message}`, { cause: err });
  }
  return decodeCapture(bytes, path);
}

export function decodeCapture(
  bytes: Buffer,
  name = '<capture>',
): { header: CaptureHeader; messages: CapturedMessage[] } {
  const fail = (offset: number, what: string): never => {
    throw new AppError(ErrorCodes.CAPTURE_INVALID, `${name}: byte ${offset}: ${what}`);
  };
  if (bytes.length < CAPTURE_MAGIC.length || !bytes.subarray(0, CAPTURE_MAGIC.length).equals(CAPTURE_MAGIC))
    fail(0, 'not an occusim capture (missing the OCCAP01 magic)');
  const records: Array<{ offset: number; value: unknown }> = [];
  for (let off = CAPTURE_MAGIC.length; off < bytes.length;) {
    const which = records.length === 0 ? 'header' : `message ${records.length - 1}`;
    if (off + 4 > bytes.length) fail(off, `truncated frame length of ${which}`);
    const len = bytes.readUInt32BE(off);
    if (off + 4 + len > bytes.length)
      fail(off, `truncated ${which}: frame of ${len} bytes, only ${bytes.length - off - 4} left`);
    let value: unknown;
    try {
      value = packr.unpack(bytes.subarray(off + 4, off + 4 + len));
    } catch (err) {
      fail(off, `corrupted ${which}: ${(err as Error).message}`);
    }
    records.push({ offset: off, value });
    off += 4 + len;
  }
  const [first, ...rest] = records;
  if (!first) return fail(bytes.length, 'no header');
  const header = checkHeader(first.value, () => fail(first.offset, 'header is not an occusim capture header'));
  const messages = rest.map((r, k) =>
    checkMessage(r.value, k, () => fail(r.offset, `message ${k} is not a captured message {i, t, topic, payload}`)),
  );
  return { header, messages };
}

function checkHeader(v: unknown, bad: () => never): CaptureHeader {
  const h = v as Partial<CaptureHeader> | null;
  if (
    typeof h !== 'object' ||
    h === null ||
    h.format !== CAPTURE_FORMAT ||
    typeof h.protocol !== 'string' ||
    !Array.isArray(h.hives)
  )
    return bad();
  return h as CaptureHeader;
}

function checkMessage(v: unknown, k: number, bad: () => never): CapturedMessage {
  const m = v as Partial<CapturedMessage> | null;
  if (
    typeof m !== 'object' ||
    m === null ||
    m.i !== k ||
    typeof m.t !== 'number' ||
    typeof m.topic !== 'string' ||
    !(m.payload instanceof Uint8Array)
  )
    return bad();
  return m as CapturedMessage;
}
