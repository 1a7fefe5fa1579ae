import type { z } from 'zod';
import { footprintTransform } from '../core/footprint.js';
import { pointInPolygon } from '../core/geometry.js';
import { parseDuration } from '../core/time.js';
import type { Seg } from './diagnostics.js';
import type { FloorScope } from './floor-scope.js';
import type {
  DoorModel,
  Fidelity,
  RoomModel,
  ScenarioModel,
  SensorModel,
  ThermalModel,
  WarmObjectModel,
} from './model.js';
import { parseAt, warn, type Ctx } from './resolve-context.js';
import { warmObjectSchema, type thermalSchema } from './thermal-schema.js';

/**
 * Thermal environment of frame fidelity (docs/scenario-format.md, "Thermal environment"):
 * the scenario's `thermal:` header, each floor's `warm_objects:`, the fleet size below which
 * frame fidelity is the default, and the placement warnings of frame sensors.
 */
export const FRAME_FLEET_MAX = 100;
const objectsByCtx = new WeakMap<Ctx, WarmObjectModel[]>();

/** Resolves a floor's `warm_objects:` list (hook in resolve-floor.ts). */
export function resolveWarmObjects(ctx: Ctx, fs: FloorScope, items: readonly unknown[]): void {
  let list = objectsByCtx.get(ctx);
  if (!list) objectsByCtx.set(ctx, (list = []));
  items.forEach((raw, i) => {
    const path = [...fs.path, 'warm_objects', i];
    const o = parseAt(ctx, warmObjectSchema, raw, path);
    if (o === null) return;
    list.push({
      name: o.name,
      kind: o.kind,
      floorId: fs.floor.id,
      position: o.position,
      size: o.size,
      temperatureC: o.temperature,
      src: ctx.pointerOf(path),
    });
  });
}

/** The model's thermal section from the header and the floors' objects. */
export function resolveThermal(ctx: Ctx, header: z.output<typeof thermalSchema> | undefined): ThermalModel {
  const period = header?.hvac?.period === undefined ? null : parseDuration(header.hvac.period);
  if (header?.hvac?.period !== undefined && !(period !== null && period > 0))
    warn(ctx, ['thermal', 'hvac', 'period'], 'thermal.hvac.period must be a duration > 0; using 20m');
  return {
    ambientC: header?.ambient ?? 22,
    hvacAmplitudeK: header?.hvac?.amplitude ?? 0.4,
    hvacPeriodMs: period !== null && period > 0 ? period : 20 * 60_000,
    objects: objectsByCtx.get(ctx) ?? [],
  };
}

/** Frame fidelity for fleets up to `frame_fleet_max` sensors, model fidelity above. */
export function defaultFidelity(header: z.output<typeof thermalSchema> | undefined, sensors: number): Fidelity {
  return sensors <= (header?.frame_fleet_max ?? FRAME_FLEET_MAX) ? 'frame' : 'model';
}

/**
 * Placement warnings of a sensor, located at its `center`: a presence sensor whose footprint
 * sees nothing of its room; a traffic sensor that sees the middle of its door line but not
 * both ends (people passing near a jamb are missed). Hook in resolve-devices.ts.
 */
export function checkSensorView(
  ctx: Ctx,
  s: SensorModel,
  room: RoomModel | null,
  door: DoorModel | null,
  path: readonly Seg[],
): void {
  const view = footprintTransform(s);
  if (s.mode === 'presence') {
    if (room && !seesAny(view, room.polygon))
      warn(ctx, [...path, 'center'], `sensor \`${s.name}\`: its footprint sees nothing of room \`${room.name}\``);
    return;
  }
  if (!door) return;
  const [a, b] = door.line;
  const middleSeen = view.sees((a[0] + b[0]) / 2, (a[1] + b[1]) / 2);
  if (middleSeen && !(view.sees(a[0], a[1]) && view.sees(b[0], b[1]))) {
    warn(
      ctx,
      [...path, 'center'],
      `sensor \`${s.name}\`: its footprint does not cover the whole line of door \`${door.name}\` (people passing near its ends are missed)`,
    );
  }
}

/** True when any point of a 9×9 grid over the footprint lies in the polygon. */
function seesAny(
  view: ReturnType<typeof footprintTransform>,
  polygon: ScenarioModel['rooms'][number]['polygon'],
): boolean {
  for (let j = 0; j <= 8; j++) {
    for (let i = 0; i <= 8; i++) {
      const [x, y] = view.toWorld(0.05 + (0.9 * i) / 8, 0.05 + (0.9 * j) / 8);
      if (pointInPolygon(x, y, polygon)) return true;
    }
  }
  return false;
}
