/**
 * Heat-map rendering of thermal frames for people debugging a detector: each sensor pixel
 * becomes a block of colour (dark blue → red → yellow → white from ambient up), detections
 * are white crosses and true positions green rings, both in sensor-local [0, 1] coordinates.
 */
export interface FrameImage {
  width: number;
  height: number;
  rgb: Uint8Array;
}

export interface Overlay {
  /** Sensor-local normalised positions. */
  detections: ReadonlyArray<readonly [number, number]>;
  truth: ReadonlyArray<readonly [number, number]>;
}

/** Colour stops of the heat scale, t in [0, 1]. */
const STOPS: ReadonlyArray<readonly [number, number, number, number]> = [
  [0, 10, 10, 40],
  [0.25, 40, 20, 140],
  [0.5, 200, 30, 60],
  [0.75, 250, 160, 20],
  [1, 255, 255, 230],
];

export function heatColour(t: number): [number, number, number] {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0));
  for (let i = 1; i < STOPS.length; i++) {
    const [t1, r1, g1, b1] = STOPS[i] as [number, number, number, number];
    if (x > t1) continue;
    const [t0, r0, g0, b0] = STOPS[i - 1] as [number, number, number, number];
    const f = (x - t0) / (t1 - t0 || 1);
    return [Math.round(r0 + f * (r1 - r0)), Math.round(g0 + f * (g1 - g0)), Math.round(b0 + f * (b1 - b0))];
  }
  return [255, 255, 230];
}

/** Renders a frame (°C, row-major cols×rows) at `scale` image pixels per sensor pixel, from `lo` to `hi` °C. */
export function renderFrame(frame: Float32Array, cols: number, rows: number, scale: number, lo: number, hi: number, overlay: Overlay): FrameImage {
  const width = cols * scale;
  const height = rows * scale;
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = frame[Math.floor(y / scale) * cols + Math.floor(x / scale)] as number;
      const [r, g, b] = heatColour((v - lo) / (hi - lo));
      const o = (y * width + x) * 3;
      rgb[o] = r;
      rgb[o + 1] = g;
      rgb[o + 2] = b;
    }
  }
  const img = { width, height, rgb };
  const mark = Math.max(4, Math.round(width / 40));
  for (const [lx, ly] of overlay.truth) ring(img, lx * width, ly * height, mark + 2, [60, 255, 90]);
  for (const [lx, ly] of overlay.detections) cross(img, lx * width, ly * height, mark, [255, 255, 255]);
  return img;
}

/** Tiles images (same size) into a sheet `perRow` wide with a 2-pixel gutter. */
export function tile(images: readonly FrameImage[], perRow: number): FrameImage {
  const first = images[0];
  if (!first) return { width: 1, height: 1, rgb: new Uint8Array(3) };
  const gap = 2;
  const cols = Math.min(perRow, images.length);
  const rowsN = Math.ceil(images.length / cols);
  const width = cols * (first.width + gap) - gap;
  const height = rowsN * (first.height + gap) - gap;
  const rgb = new Uint8Array(width * height * 3).fill(24);
  images.forEach((im, k) => {
    const ox = (k % cols) * (first.width + gap);
    const oy = Math.floor(k / cols) * (first.height + gap);
    for (let y = 0; y < im.height; y++) rgb.set(im.rgb.subarray(y * im.width * 3, (y + 1) * im.width * 3), ((oy + y) * width + ox) * 3);
  });
  return { width, height, rgb };
}

function put(img: FrameImage, x: number, y: number, c: readonly [number, number, number]): void {
  const xi = Math.round(x);
  const yi = Math.round(y);
  if (xi < 0 || yi < 0 || xi >= img.width || yi >= img.height) return;
  const o = (yi * img.width + xi) * 3;
  img.rgb[o] = c[0];
  img.rgb[o + 1] = c[1];
  img.rgb[o + 2] = c[2];
}

function cross(img: FrameImage, x: number, y: number, r: number, c: readonly [number, number, number]): void {
  for (let d = -r; d <= r; d++) {
    put(img, x + d, y + d, c);
    put(img, x + d, y - d, c);
    put(img, x + d + 1, y + d, c);
    put(img, x + d + 1, y - d, c);
  }
}

function ring(img: FrameImage, x: number, y: number, r: number, c: readonly [number, number, number]): void {
  const steps = Math.max(24, Math.round(8 * r));
  for (let k = 0; k < steps; k++) {
    const a = (2 * Math.PI * k) / steps;
    put(img, x + r * Math.cos(a), y + r * Math.sin(a), c);
    put(img, x + (r + 1) * Math.cos(a), y + (r + 1) * Math.sin(a), c);
  }
}
