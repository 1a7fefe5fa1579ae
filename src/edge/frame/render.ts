/**
 * The heat scale and image types of the frame pictures for people debugging a detector
 * (labelled.ts draws them): dark blue → red → yellow → white from ambient up; detections
 * and true positions in sensor-local [0, 1] coordinates.
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
