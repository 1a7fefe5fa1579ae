import { degToRad, type Vec2 } from './geometry.js';

/**
 * Sensor geometry shared by the edge (world → sensor-local) and the cloud (sensor-local →
 * world). A ceiling sensor looking straight down with field of view `fov` at height `h` sees
 * a square footprint of side 2·tan(fov/2)·h (platform-reference §6), centred under it and
 * rotated by its orientation (yaw, degrees counter-clockwise from the floor plan's x axis).
 * Sensor-local coordinates are normalised: [0, 1] × [0, 1] across the footprint.
 */
export interface Placement {
  center: Vec2;
  height: number;
  orientationDeg: number;
  fovDeg: number;
}

export function footprintSide(p: Pick<Placement, 'height' | 'fovDeg'>): number {
  return 2 * Math.tan(degToRad(p.fovDeg) / 2) * p.height;
}

/** Precomputed transform for one sensor: cheap enough to call per detection. */
export interface FootprintTransform {
  side: number;
  toLocal(x: number, y: number): Vec2;
  /** `toLocal` into `out[0]`, `out[1]` (no tuple: the frame edge calls it per sensor and person every tick). */
  toLocalInto(x: number, y: number, out: Float64Array): void;
  toWorld(lx: number, ly: number): Vec2;
  /** True when the world point lies inside the footprint. */
  sees(x: number, y: number): boolean;
  /** Footprint corners in world coordinates (counter-clockwise). */
  corners(): Vec2[];
}

export function footprintTransform(p: Placement): FootprintTransform {
  const side = footprintSide(p);
  const yaw = degToRad(p.orientationDeg);
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  const [cx, cy] = p.center;
  const toLocal = (x: number, y: number): Vec2 => {
    const dx = x - cx;
    const dy = y - cy;
    // Rotate by -yaw into the sensor frame, then normalise across the footprint.
    return [(dx * c + dy * s) / side + 0.5, (-dx * s + dy * c) / side + 0.5];
  };
  const toWorld = (lx: number, ly: number): Vec2 => {
    const u = (lx - 0.5) * side;
    const v = (ly - 0.5) * side;
    return [cx + u * c - v * s, cy + u * s + v * c];
  };
  return {
    side,
    toLocal,
    toLocalInto(x, y, out) {
      const dx = x - cx;
      const dy = y - cy;
      out[0] = (dx * c + dy * s) / side + 0.5;
      out[1] = (-dx * s + dy * c) / side + 0.5;
    },
    toWorld,
    // Called per sensor and person every tick: the same arithmetic as `toLocal`, without its
    // tuple (that garbage grew the run's scavenges with the fleet: bench/README.md, scale-main).
    sees(x, y) {
      const dx = x - cx;
      const dy = y - cy;
      const lx = (dx * c + dy * s) / side + 0.5;
      if (!(lx >= 0 && lx < 1)) return false;
      const ly = (-dx * s + dy * c) / side + 0.5;
      return ly >= 0 && ly < 1;
    },
    corners: () => [toWorld(0, 0), toWorld(1, 0), toWorld(1, 1), toWorld(0, 1)],
  };
}
