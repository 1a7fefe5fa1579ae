import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, encodePng } from '../../src/edge/frame/png.js';
import { cli } from '../cli/fixtures/run-cli.js';

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
    const r = await cli('frames', QUICKSTART, '--sensor', 'Front door counter', '--from', '08:10', '--to', '08:10:10', '--out', dir);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const files = readdirSync(dir);
    expect(files).toContain('sheet.png');
    expect(files.filter((f) => f.endsWith('.png')).length).toBeGreaterThanOrEqual(80); // 8 fps × 10 s + sheet
    expect(readFileSync(join(dir, 'sheet.png')).subarray(1, 4).toString()).toBe('PNG');
  });

  it('refuses an unknown sensor with the list of names', async () => {
    const r = await cli('frames', QUICKSTART, '--sensor', 'Nope', '--from', '0s', '--to', '10s', '--out', tmpdir());
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no sensor "Nope"; sensors: .*Front door counter/);
  });
});
