import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeGif, lzw } from '../../src/edge/frame/gif.js';
import { PALETTE, type IndexedImage } from '../../src/edge/frame/labelled.js';
import { readGif, unlzw } from './fixtures/gif-reader.js';

describe('the GIF encoder', () => {
  it('LZW round-trips any pixels, including past the 4096-code table reset (fast-check seed 17)', () => {
    console.log('fast-check seed 17');
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 20_000 }),
        fc.integer({ min: 1, max: 256 }),
        (raw, colours) => {
          const px = raw.map((v) => v % colours);
          expect(unlzw(lzw(px), px.length)).toEqual(px);
        },
      ),
      { seed: 17, numRuns: 60 },
    );
    // Long enough for several table resets, with the few colours of a heat map.
    let x = 1;
    const long = Uint8Array.from({ length: 300_000 }, () => ((x = (x * 48271) % 2147483647), x % 9));
    expect(unlzw(lzw(long), long.length)).toEqual(long);
  });

  it('writes every frame with its delay, decodable pixel for pixel', () => {
    const frame = (k: number): IndexedImage => ({
      width: 7,
      height: 5,
      pixels: Uint8Array.from({ length: 35 }, (_, i) => (i * 7 + k) % 205),
    });
    const gif = readGif(encodeGif([frame(0), frame(1), frame(2)], PALETTE, 33.3));
    expect([gif.width, gif.height]).toEqual([7, 5]);
    expect(gif.frames.map((f) => f.delayCs)).toEqual([33, 33, 33]);
    gif.frames.forEach((f, k) => expect(f.pixels).toEqual(frame(k).pixels));
  });
});
