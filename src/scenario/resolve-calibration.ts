import { localToEpoch } from '../core/time.js';
import type { Seg } from './diagnostics.js';
import type { CalibrationPointModel } from './model.js';
import { error, type Ctx } from './resolve-context.js';

/**
 * `calibration_points` of a room or floor → `{ calibrationPoints }` with epoch ms, sorted by
 * time (local date-times in the site's zone; an explicit offset or Z wins), or `{}` when
 * the field is absent. A malformed timestamp is an error located at it.
 */
export function resolveCalibrationPoints(
  ctx: Ctx,
  raw: ReadonlyArray<{ timestamp: string; occupancy: number }> | undefined,
  path: readonly Seg[],
  siteId: string,
): { calibrationPoints?: CalibrationPointModel[] } {
  if (raw === undefined) return {};
  const zone = ctx.lists.sites.find((s) => s.id === siteId)?.timezone ?? 'UTC';
  const points: CalibrationPointModel[] = [];
  raw.forEach((p, i) => {
    const ms = localToEpoch(p.timestamp, zone);
    if (ms === null)
      error(
        ctx,
        [...path, 'calibration_points', i, 'timestamp'],
        `bad date-time \`${p.timestamp}\` (expected e.g. 2026-03-02T13:00)`,
      );
    else points.push({ timestampMs: ms, occupancy: p.occupancy });
  });
  return { calibrationPoints: points.sort((a, b) => a.timestampMs - b.timestampMs) };
}
