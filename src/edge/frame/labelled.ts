import { drawText, GLYPH_H, textWidth } from './font.js';
import { heatColour, type FrameImage, type Overlay } from './render.js';

/**
 * A thermal frame a person can read: a header with the sensor's name and array and the
 * simulated local time, the heat map with detections (white crosses) and, optionally, true
 * positions (green rings), a colour scale in °C beside it, and a legend with the counts.
 * Drawn as palette indices (one shared 256-colour palette), so the same pixels make a PNG
 * (`toRgb`) and a GIF frame without quantisation.
 */
export interface IndexedImage {
  width: number;
  height: number;
  /** One palette index per pixel, row-major. */
  pixels: Uint8Array;
}

/** Palette entries 0 … HEAT_STEPS−1 are the heat scale from `lo` to `hi`. */
export const HEAT_STEPS = 200;
const BG = HEAT_STEPS;
const WHITE = HEAT_STEPS + 1;
const GREEN = HEAT_STEPS + 2;
const GREY = HEAT_STEPS + 3;
const HEADER = HEAT_STEPS + 4;

/** The shared palette, 256 RGB triples. */
export const PALETTE: Uint8Array = (() => {
  const p = new Uint8Array(256 * 3);
  for (let i = 0; i < HEAT_STEPS; i++) p.set(heatColour(i / (HEAT_STEPS - 1)), i * 3);
  p.set([24, 24, 28], BG * 3);
  p.set([255, 255, 255], WHITE * 3);
  p.set([60, 255, 90], GREEN * 3);
  p.set([170, 170, 170], GREY * 3);
  p.set([10, 10, 18], HEADER * 3);
  return p;
})();

export interface FrameLabel {
  /** Sensor name and array model, e.g. `Office 1 (butlr-heimdall-v2)`. */
  title: string;
  /** Simulated local time, e.g. `2026-03-02 08:15:03 +01:00`. */
  time: string;
}

export interface LabelledFrameInput {
  frame: Float32Array;
  cols: number;
  rows: number;
  /** Image pixels per sensor pixel. */
  scale: number;
  /** °C at the bottom and top of the colour scale. */
  lo: number;
  hi: number;
  overlay: Overlay;
  /** Draw the true positions (rings). */
  showTruth: boolean;
  label: FrameLabel;
}

const TEXT = 2;
const LINE = GLYPH_H * TEXT + 6;
const PAD = 6;
const BAR_W = 14;

export function labelledFrame(f: LabelledFrameInput): IndexedImage {
  const heatW = f.cols * f.scale;
  const heatH = f.rows * f.scale;
  const scaleW = PAD + BAR_W + 5 + textWidth('-10°C', TEXT) + PAD;
  const width = Math.max(
    heatW + scaleW,
    PAD * 2 + Math.max(textWidth(f.label.title, TEXT), textWidth(f.label.time, TEXT)),
  );
  const top = PAD + 2 * LINE;
  const height = top + heatH + LINE + PAD;
  const img: IndexedImage = { width, height, pixels: new Uint8Array(width * height).fill(BG) };
  fill(img, 0, 0, width, top - 2, HEADER);
  text(img, f.label.title, PAD, PAD, WHITE);
  text(img, f.label.time, PAD, PAD + LINE, WHITE);
  // Heat map.
  const span = f.hi - f.lo || 1;
  for (let y = 0; y < heatH; y++) {
    for (let x = 0; x < heatW; x++) {
      const v = f.frame[Math.floor(y / f.scale) * f.cols + Math.floor(x / f.scale)] as number;
      img.pixels[(top + y) * width + x] = heatIndex((v - f.lo) / span);
    }
  }
  const mark = Math.max(4, Math.round(heatW / 40));
  if (f.showTruth) for (const [lx, ly] of f.overlay.truth) ring(img, lx * heatW, top + ly * heatH, mark + 2, GREEN);
  // A dark outline keeps a white cross visible on the hottest (near-white) pixels.
  for (const [lx, ly] of f.overlay.detections) {
    const [cx, cy] = [lx * heatW, top + ly * heatH];
    for (const [dx, dy] of [
      [-1, 0],
      [1, 0],
      [0, -1],
      [0, 1],
    ] as const)
      cross(img, cx + dx, cy + dy, mark, HEADER);
    cross(img, cx, cy, mark, WHITE);
  }
  colourScale(img, heatW + PAD, top, heatH, f.lo, f.hi);
  // Legend with counts under the heat map.
  const y = top + heatH + 5;
  cross(img, PAD + 5, y + 7, 5, WHITE);
  let x = PAD + 14;
  const det = `DETECTED ${f.overlay.detections.length}`;
  text(img, det, x, y, WHITE);
  x += textWidth(det, TEXT) + 14;
  if (f.showTruth) {
    ring(img, x + 5, y + 7, 5, GREEN);
    text(img, `TRUE ${f.overlay.truth.length}`, x + 14, y, GREEN);
  }
  return img;
}

function heatIndex(t: number): number {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0));
  return Math.round(x * (HEAT_STEPS - 1));
}

/** A vertical bar from `lo` (bottom) to `hi` (top) with a tick and label every 1, 2 or 5 °C. */
function colourScale(img: IndexedImage, x: number, top: number, h: number, lo: number, hi: number): void {
  for (let y = 0; y < h; y++) fill(img, x, top + y, BAR_W, 1, heatIndex(1 - y / Math.max(1, h - 1)));
  const span = hi - lo;
  const step = [1, 2, 5, 10].find((s) => span / s <= Math.max(2, Math.floor(h / (LINE + 2)))) ?? 10;
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) {
    const y = Math.round(top + (1 - (v - lo) / span) * (h - 1));
    fill(img, x + BAR_W, y, 3, 1, WHITE);
    text(
      img,
      `${Math.round(v)}°C`,
      x + BAR_W + 5,
      Math.min(top + h - GLYPH_H * TEXT, Math.max(top, y - (GLYPH_H * TEXT) / 2)),
      WHITE,
    );
  }
}

function set(img: IndexedImage, x: number, y: number, c: number): void {
  const xi = Math.round(x);
  const yi = Math.round(y);
  if (xi < 0 || yi < 0 || xi >= img.width || yi >= img.height) return;
  img.pixels[yi * img.width + xi] = c;
}

function fill(img: IndexedImage, x: number, y: number, w: number, h: number, c: number): void {
  for (let j = 0; j < h; j++) for (let i = 0; i < w; i++) set(img, x + i, y + j, c);
}

function text(img: IndexedImage, s: string, x: number, y: number, c: number): void {
  drawText(s, x, y, TEXT, (px, py) => set(img, px, py, c));
}

function cross(img: IndexedImage, x: number, y: number, r: number, c: number): void {
  for (let d = -r; d <= r; d++) {
    set(img, x + d, y + d, c);
    set(img, x + d, y - d, c);
    set(img, x + d + 1, y + d, c);
    set(img, x + d + 1, y - d, c);
  }
}

function ring(img: IndexedImage, x: number, y: number, r: number, c: number): void {
  const steps = Math.max(24, Math.round(8 * r));
  for (let k = 0; k < steps; k++) {
    const a = (2 * Math.PI * k) / steps;
    set(img, x + r * Math.cos(a), y + r * Math.sin(a), c);
    set(img, x + (r + 1) * Math.cos(a), y + (r + 1) * Math.sin(a), c);
  }
}

export function toRgb(img: IndexedImage): FrameImage {
  const rgb = new Uint8Array(img.width * img.height * 3);
  for (let i = 0; i < img.pixels.length; i++) {
    const p = (img.pixels[i] as number) * 3;
    rgb[i * 3] = PALETTE[p] as number;
    rgb[i * 3 + 1] = PALETTE[p + 1] as number;
    rgb[i * 3 + 2] = PALETTE[p + 2] as number;
  }
  return { width: img.width, height: img.height, rgb };
}

/** Tiles images into a sheet `perRow` wide with a gutter; every image keeps its own label. */
export function tileIndexed(images: readonly IndexedImage[], perRow: number): IndexedImage {
  const first = images[0];
  if (!first) throw new RangeError('no images to tile');
  const gap = 4;
  const w = Math.max(...images.map((i) => i.width));
  const h = Math.max(...images.map((i) => i.height));
  const cols = Math.min(perRow, images.length);
  const rows = Math.ceil(images.length / cols);
  const width = cols * (w + gap) - gap;
  const height = rows * (h + gap) - gap;
  const pixels = new Uint8Array(width * height).fill(HEADER);
  images.forEach((im, k) => {
    const ox = (k % cols) * (w + gap);
    const oy = Math.floor(k / cols) * (h + gap);
    for (let y = 0; y < im.height; y++)
      pixels.set(im.pixels.subarray(y * im.width, (y + 1) * im.width), (oy + y) * width + ox);
  });
  return { width, height, pixels };
}
