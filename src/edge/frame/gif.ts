import type { IndexedImage } from './labelled.js';

/**
 * Minimal animated GIF encoder (GIF89a: one global 256-colour table, a NETSCAPE2.0 loop
 * extension, a graphic control extension and an LZW-coded image per frame) for `occusim frames
 * --gif`. The frames are already palette indices (labelled.ts), so nothing is quantised.
 * Spec: GIF89a (W3C), LZW with 8-bit minimum code size and codes up to 12 bits.
 */
export function encodeGif(frames: readonly IndexedImage[], palette: Uint8Array, delayCs: number): Buffer {
  const first = frames[0];
  if (!first) throw new RangeError('a GIF needs at least one frame');
  if (palette.length !== 256 * 3) throw new RangeError('the palette must hold 256 RGB entries');
  const out: Buffer[] = [];
  const head = Buffer.alloc(13);
  head.write('GIF89a', 0, 'ascii');
  head.writeUInt16LE(first.width, 6);
  head.writeUInt16LE(first.height, 8);
  head[10] = 0xf7; // global colour table, 8 bits per primary, 256 entries
  out.push(head, Buffer.from(palette));
  // Loop forever.
  out.push(Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0', 'ascii'), 0x03, 0x01, 0x00, 0x00, 0x00]));
  const delay = Math.max(2, Math.min(65535, Math.round(delayCs)));
  for (const f of frames) {
    if (f.width !== first.width || f.height !== first.height)
      throw new RangeError('every GIF frame must have the size of the first');
    out.push(Buffer.from([0x21, 0xf9, 0x04, 0x04, delay & 0xff, delay >> 8, 0x00, 0x00]));
    const desc = Buffer.alloc(10);
    desc[0] = 0x2c;
    desc.writeUInt16LE(f.width, 5);
    desc.writeUInt16LE(f.height, 7);
    out.push(desc, Buffer.from([8]), subBlocks(lzw(f.pixels)));
  }
  out.push(Buffer.from([0x3b]));
  return Buffer.concat(out);
}

/** LZW with variable code width (9–12 bits), a clear code at the start and when the table fills. */
export function lzw(pixels: Uint8Array): Uint8Array {
  const CLEAR = 256;
  const END = 257;
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  let width = 9;
  const emit = (code: number): void => {
    acc |= code << bits;
    bits += width;
    while (bits >= 8) {
      bytes.push(acc & 0xff);
      acc >>>= 8;
      bits -= 8;
    }
  };
  let table = new Map<number, number>();
  let next = 258;
  emit(CLEAR);
  if (pixels.length === 0) {
    emit(END);
    if (bits > 0) bytes.push(acc & 0xff);
    return Uint8Array.from(bytes);
  }
  let prefix = pixels[0] as number;
  for (let i = 1; i < pixels.length; i++) {
    const k = pixels[i] as number;
    const key = prefix * 256 + k;
    const hit = table.get(key);
    if (hit !== undefined) {
      prefix = hit;
      continue;
    }
    emit(prefix);
    if (next < 4096) {
      table.set(key, next++);
      // The decoder's table is one entry behind: widen once the next code would not fit.
      if (next > 1 << width && width < 12) width++;
    } else {
      emit(CLEAR);
      table = new Map();
      next = 258;
      width = 9;
    }
    prefix = k;
  }
  emit(prefix);
  emit(END);
  if (bits > 0) bytes.push(acc & 0xff);
  return Uint8Array.from(bytes);
}

function subBlocks(data: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const n = Math.min(255, data.length - i);
    parts.push(Buffer.from([n]), Buffer.from(data.subarray(i, i + n)));
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}
