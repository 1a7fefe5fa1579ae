import { footprintTransform } from '../../core/footprint.js';
import { pointInPolygon } from '../../core/geometry.js';
import { rngFor } from '../../core/rng.js';
import {
  SENSOR_MODELS,
  type DoorModel,
  type RoomModel,
  type ScenarioModel,
  type SensorModel,
  type ThermalModel,
  type WarmObjectModel,
} from '../../scenario/model.js';
import { seedState } from './noise.js';
import { stateViews, type StateOn } from './state.js';

/**
 * Everything the frame kernel needs to know about one sensor, as plain numbers so it crosses
 * a worker boundary cheaply. Physical constants and their sources: docs/edge.md.
 */
export interface FrameSpec {
  id: string;
  mode: 0 | 1; // 0 presence, 1 traffic
  cols: number;
  rows: number;
  /** Footprint side, metres. */
  side: number;
  fps: number;
  startMs: number;
  reportIntervalMs: number;
  /** Detection threshold above background, K (from sensitivity). */
  thresholdK: number;
  /** Temporal noise standard deviation, K. */
  netdK: number;
  ambientC: number;
  hvacAmplitudeK: number;
  hvacPeriodMs: number;
  /** Heat of one average person, K·pixel (for blob splitting and rejection). */
  personHeat: number;
  /** Time constant of the background under foreground pixels, s (how slowly a still person is absorbed). */
  absorbTauS: number;
  /** Door line in sensor-local metres [ax, ay, bx, by], traffic only. */
  door: [number, number, number, number];
  /** +1 when the sensor's "in" room lies on the left of a→b, −1 on the right. */
  inSign: number;
  /** 1 when the door is a floor entrance (people outside the floor are not simulated). */
  entrance: 0 | 1;
  /** Mounting height, metres. */
  heightM: number;
  /**
   * Pinhole magnification H/(H−h) of the body parts, by their height h above the floor:
   * [standing shoulders, standing head, seated shoulders, seated head, hips, lap] (BODY heights).
   */
  magnify: [number, number, number, number, number, number];
}

/** Thermal defaults (docs/edge.md). */
export const THERMAL_DEFAULTS: ThermalModel = {
  ambientC: 22,
  hvacAmplitudeK: 0.4,
  hvacPeriodMs: 20 * 60_000,
  objects: [],
};
export const DEFAULT_FPS = { presence: 3, traffic: 8 } as const;
/** Threshold above background by sensitivity 1…5, kelvin. */
const THRESHOLD_K = [1.0, 0.8, 0.6, 0.5, 0.4] as const;
const NETD_K = 0.15;
/** Per-pixel fixed-pattern offset left after factory calibration, K (sd). */
const FIXED_PATTERN_SD_K = 0.25;
const ABSORB_TAU_S = 4 * 3600;

/**
 * Body seen from above: shoulder box and head box half-sizes (m), surface temperatures, and the
 * heights of those parts above the floor (m) standing/walking and seated (adult anthropometry:
 * top of head ~1.70 m / ~1.25 m seated; the boxes sit at their parts' visible surfaces).
 */
export const BODY = {
  shoulderHalfM: 0.25,
  seatedShoulderHalfM: 0.28,
  headHalfM: 0.1,
  clothing: 0.55,
  surfaceC: 32,
  standingShoulderM: 1.4,
  standingHeadM: 1.65,
  seatedShoulderM: 1.0,
  seatedHeadM: 1.2,
  // Lower body (clothed), seen beside the shoulders when a person is off-axis: hips standing, lap seated.
  hipHalfM: 0.18,
  hipM: 0.9,
  lapHalfM: 0.22,
  lapM: 0.55,
} as const;

/**
 * Parallax (bodies seen at their height through the pinhole) is implemented but OFF in
 * scenario runs: with it, traffic recall at floor entrances fell from 89–98 % to 68–77 % on
 * quickstart and blob splitting needs retuning (docs/edge.md, "Parallax"). Tests switch it on
 * per spec with `parallaxMagnify`.
 */
export const PARALLAX = false;
const NO_PARALLAX: FrameSpec['magnify'] = [1, 1, 1, 1, 1, 1];

/** The pinhole magnifications of the body parts (FrameSpec.magnify) for a sensor at height H. */
export function parallaxMagnify(H: number): FrameSpec['magnify'] {
  return [
    magnification(H, BODY.standingShoulderM),
    magnification(H, BODY.standingHeadM),
    magnification(H, BODY.seatedShoulderM),
    magnification(H, BODY.seatedHeadM),
    magnification(H, BODY.hipM),
    magnification(H, BODY.lapM),
  ];
}

/** Pinhole magnification of a surface at height h seen from a sensor at height H. */
export function magnification(sensorHeightM: number, partHeightM: number): number {
  // A part never gets closer than 0.3 m to the lens (heights are validated to ≥ 2.4 m anyway).
  return sensorHeightM / Math.max(0.3, sensorHeightM - partHeightM);
}

/** The spec of one sensor; `parallax` overrides PARALLAX (tests). */
export function buildSpec(model: ScenarioModel, sensor: SensorModel, parallax = PARALLAX): FrameSpec {
  const thermal = model.thermal ?? THERMAL_DEFAULTS;
  const { cols, rows } = SENSOR_MODELS[sensor.model];
  const view = footprintTransform(sensor);
  const side = view.side;
  const dt = BODY.surfaceC - thermal.ambientC;
  const H = sensor.height;
  const magnify = parallax ? parallaxMagnify(H) : NO_PARALLAX;
  // Heat (K·m² on the floor plane) of a standing and of a seated person as the sensor sees them;
  // one "person" for splitting and rejection is their geometric mean.
  const heat = (half: number, ms: number, mh: number): number =>
    (2 * half * ms) ** 2 * dt * BODY.clothing + (2 * BODY.headHalfM * mh) ** 2 * dt * (1 - BODY.clothing);
  const standing = heat(BODY.shoulderHalfM, magnify[0], magnify[1]);
  const seated = heat(BODY.seatedShoulderHalfM, magnify[2], magnify[3]);
  const pixelArea = (side / cols) * (side / rows);
  const door =
    sensor.mode === 'traffic'
      ? doorLine(model, sensor)
      : { line: [0, 0, 0, 0] as [number, number, number, number], inSign: 1 };
  return {
    id: sensor.id,
    mode: sensor.mode === 'traffic' ? 1 : 0,
    cols,
    rows,
    side,
    fps: sensor.fps ?? DEFAULT_FPS[sensor.mode],
    startMs: model.startMs,
    reportIntervalMs: sensor.reportIntervalMs,
    thresholdK: THRESHOLD_K[Math.min(4, Math.max(0, Math.round(sensor.sensitivity) - 1))] as number,
    netdK: NETD_K,
    ambientC: thermal.ambientC,
    hvacAmplitudeK: thermal.hvacAmplitudeK,
    hvacPeriodMs: thermal.hvacPeriodMs,
    personHeat: Math.sqrt(standing * seated) / pixelArea,
    absorbTauS: ABSORB_TAU_S,
    door: door.line,
    inSign: door.inSign,
    entrance: sensor.mode === 'traffic' && model.doors.find((d) => d.id === sensor.doorId)?.entrance === true ? 1 : 0,
    heightM: H,
    magnify,
  };
}

/** The door line in sensor-local metres and the side of it the sensor's "in" room is on. */
function doorLine(
  model: ScenarioModel,
  sensor: SensorModel,
): { line: [number, number, number, number]; inSign: number } {
  const door: DoorModel | undefined = model.doors.find((d) => d.id === sensor.doorId);
  if (!door) return { line: [0, 0, 0, 0], inSign: 1 };
  const view = footprintTransform(sensor);
  const [a, b] = door.line;
  const [ax, ay] = view.toLocal(a[0], a[1]);
  const [bx, by] = view.toLocal(b[0], b[1]);
  // Probe a point just off the door's middle, on the left of a→b in world coordinates.
  const mx = (a[0] + b[0]) / 2;
  const my = (a[1] + b[1]) / 2;
  const len = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
  const px = mx - ((b[1] - a[1]) / len) * 0.2;
  const py = my + ((b[0] - a[0]) / len) * 0.2;
  const room: RoomModel | undefined = model.rooms.find((r) => r.id === sensor.roomId);
  const leftIsIn = room ? pointInPolygon(px, py, room.polygon) : true;
  // Left of a→b in the world stays left in the sensor frame (a rotation keeps orientation).
  const s = view.side;
  return { line: [ax * s, ay * s, bx * s, by * s], inSign: leftIsIn ? 1 : -1 };
}

/**
 * A sensor's initial state: fixed-pattern offsets and static warm objects baked into
 * `fixed`, a background learnt on the empty room, and its noise stream seeded from
 * `rngFor(seed, sensorId)`.
 */
export function initialState(model: ScenarioModel, sensor: SensorModel, spec: FrameSpec): StateOn<ArrayBuffer> {
  const n = spec.cols * spec.rows;
  const st = stateViews(n);
  const rng = rngFor(model.seed, `${sensor.id}:frame`);
  for (let i = 0; i < n; i++) st.fixed[i] = rng.normal(0, FIXED_PATTERN_SD_K);
  seedState(st.rng, [rng.next(), rng.next(), rng.next(), rng.next()]);
  const objects = (model.thermal ?? THERMAL_DEFAULTS).objects.filter((o) => o.floorId === sensor.floorId);
  for (const o of objects) bakeObject(st.fixed, sensor, spec, o);
  for (let i = 0; i < n; i++) st.bg[i] = spec.ambientC + (st.fixed[i] as number);
  return st;
}

/** Adds a warm object's coverage-weighted excess temperature to the fixed image (4×4 supersampling). */
function bakeObject(fixed: Float32Array, sensor: SensorModel, spec: FrameSpec, o: WarmObjectModel): void {
  const view = footprintTransform(sensor);
  const excess = o.temperatureC - spec.ambientC;
  const [hw, hd] = [o.size[0] / 2, o.size[1] / 2];
  for (let j = 0; j < spec.rows; j++) {
    for (let i = 0; i < spec.cols; i++) {
      let inside = 0;
      for (let sj = 0; sj < 4; sj++) {
        for (let si = 0; si < 4; si++) {
          const [x, y] = view.toWorld((i + (si + 0.5) / 4) / spec.cols, (j + (sj + 0.5) / 4) / spec.rows);
          if (Math.abs(x - o.position[0]) <= hw && Math.abs(y - o.position[1]) <= hd) inside++;
        }
      }
      if (inside > 0) fixed[j * spec.cols + i] = (fixed[j * spec.cols + i] as number) + (excess * inside) / 16;
    }
  }
}
