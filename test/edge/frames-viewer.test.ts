import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, encodePng } from '../../src/edge/frame/png.js';
import { cli } from '../cli/fixtures/run-cli.js';
import { HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
import { readGif } from './fixtures/gif-reader.js';

/** Width, height and RGB pixels of one of our PNGs (8-bit RGB, filter 0 on every row). */
function readPng(buf: Buffer): { width: number; height: number; rgb: Buffer } {
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  const at = buf.indexOf('IDAT');
  const raw = inflateSync(buf.subarray(at + 4, at + 4 + buf.readUInt32BE(at - 4)));
  const rgb = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) raw.copy(rgb, y * width * 3, y * (width * 3 + 1) + 1, (y + 1) * (width * 3 + 1));
  return { width, height, rgb };
}

const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

describe('the PNG encoder', () => {
  it('writes a valid signature, CRC-checked chunks and the exact pixels', () => {
    const rgb = Uint8Array.from({ length: 3 * 4 * 2 }, (_, i) => (i * 37) % 256);
    const png = encodePng(4, 2, rgb);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const idatAt = png.indexOf('IDAT');
    const len = png.readUInt32BE(idatAt - 4);
    const data = png.subarray(idatAt + 4, idatAt + 4 + len);
    expect(png.readUInt32BE(idatAt + 4 + len)).toBe(crc32(png.subarray(idatAt, idatAt + 4 + len)));
    const raw = inflateSync(data);
    expect([...raw.subarray(1, 13)]).toEqual([...rgb.subarray(0, 12)]);
    expect([...raw.subarray(14, 26)]).toEqual([...rgb.subarray(12, 24)]);
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926); // the standard CRC-32 check value
  });
});

describe('occusim frames', () => {
  it('renders what a quickstart sensor saw as PNG files and a sheet', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-frames-'));
    const r = await cli(
      'frames',
      QUICKSTART,
      '--sensor',
      'Front door counter',
      '--from',
      '08:10',
      '--to',
      '08:10:10',
      '--out',
      dir,
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const files = readdirSync(dir);
    expect(files).toContain('sheet.png');
    expect(files.filter((f) => f.endsWith('.png')).length).toBeGreaterThanOrEqual(80); // 8 fps × 10 s + sheet
    expect(readFileSync(join(dir, 'sheet.png')).subarray(1, 4).toString()).toBe('PNG');
  });

  it('labels every frame, tiles a labelled sheet and animates the period as a GIF', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-frames-'));
    const gifPath = join(dir, 'period.gif');
    const r = await cli(
      'frames',
      QUICKSTART,
      '--sensor',
      'Office-0-0',
      '--from',
      '09:40',
      '--to',
      '09:40:05',
      '--out',
      dir,
      '--gif',
      gifPath,
      '--true-positions',
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const files = readdirSync(dir)
      .filter((f) => /^Office-0-0-\d{5}\.png$/.test(f))
      .sort();
    expect(files.length).toBe(16); // 3 fps × 5 s, both ends included
    const first = readPng(readFileSync(join(dir, files[0] as string)));
    const gif = readGif(readFileSync(gifPath));
    expect(gif.frames.length).toBe(files.length);
    expect([gif.width, gif.height]).toEqual([first.width, first.height]);
    // Larger than the bare 256 × 256 heat map: a header, a colour scale and a legend around it.
    expect(first.width).toBeGreaterThan(256);
    expect(first.height).toBeGreaterThan(256);
    // The header band (dark) holds light text pixels: the label is there.
    const headerLight = [...Array(first.width * 30).keys()].filter(
      (i) => (first.rgb[i * 3] as number) > 200 && (first.rgb[i * 3 + 1] as number) > 200,
    ).length;
    expect(headerLight).toBeGreaterThan(200);
    const sheet = readPng(readFileSync(join(dir, 'sheet.png')));
    expect(sheet.width).toBeGreaterThan(first.width * 5);
  }, 60_000);

  it.skipIf(!HAVE_CHROMIUM)(
    'writes a GIF that Chromium decodes to the same pixels as the PNG of that frame',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'occusim-frames-gif-'));
      const gifPath = join(dir, 'p.gif');
      const r = await cli(
        'frames',
        QUICKSTART,
        '--sensor',
        'Meeting',
        '--from',
        '09:10',
        '--to',
        '09:10:01',
        '--out',
        dir,
        '--gif',
        gifPath,
      );
      expect(r.code, r.err).toBe(0);
      const png = readPng(readFileSync(join(dir, 'Meeting-00000.png')));
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const gifData = `data:image/gif;base64,${readFileSync(gifPath).toString('base64')}`;
        // Runs in the page (a string: the tests are type-checked without the DOM library).
        const pixels = (await page.evaluate(`(async () => {
        const img = new Image();
        img.src = ${JSON.stringify(gifData)};
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        return { w: c.width, h: c.height, data: Array.from(g.getImageData(0, 0, c.width, c.height).data) };
      })()`)) as { w: number; h: number; data: number[] };
        expect([pixels.w, pixels.h]).toEqual([png.width, png.height]);
        let diff = 0;
        for (let i = 0; i < png.width * png.height; i++)
          for (let ch = 0; ch < 3; ch++) if (pixels.data[i * 4 + ch] !== png.rgb[i * 3 + ch]) diff++;
        expect(diff).toBe(0);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );

  it('refuses a period outside the scenario (exit 2) instead of writing an empty sheet', async () => {
    const before = await cli(
      'frames',
      QUICKSTART,
      '--sensor',
      'Meeting',
      '--from',
      '07:00',
      '--to',
      '07:01',
      '--out',
      tmpdir(),
    );
    expect(before.code).toBe(2);
    expect(before.err).toMatch(
      /outside the scenario, which runs from 2026-03-02 08:00:00\+01:00 to 2026-03-02 11:00:00\+01:00/,
    );
    const after = await cli(
      'frames',
      QUICKSTART,
      '--sensor',
      'Meeting',
      '--from',
      '10:59',
      '--to',
      '11:30',
      '--out',
      tmpdir(),
    );
    expect(after.code).toBe(2);
  });

  it('refuses an unknown sensor with the list of names', async () => {
    const r = await cli('frames', QUICKSTART, '--sensor', 'Nope', '--from', '0s', '--to', '10s', '--out', tmpdir());
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no sensor "Nope"; sensors: .*Front door counter/);
  });
});
