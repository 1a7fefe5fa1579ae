import type { TruthRecorder } from '../sim/truth.js';
import type { StateRow } from '../webhooks/consumer-state.js';

/**
 * The expected consumer state with the truth beside it (`occusim run --consumer-expect`): for
 * an occupancy row, the simulated number of people in its space at that minute (the median of
 * the minute's ticks, as the report's accuracy uses); null for DETECTIONS and TRAFFIC rows and
 * for a space the truth does not cover. A consumer's verdict compares values only: the truth
 * says how far what the platform delivered is from what happened.
 */
export function withTruth(rows: readonly StateRow[], truth: TruthRecorder): StateRow[] {
  const series = new Map<string, ReadonlyMap<number, number>>();
  return rows.map((r) => {
    if (r.type === 'DETECTIONS' || r.type === 'TRAFFIC') return { ...r, truth: null };
    let s = series.get(r.subject);
    if (!s) series.set(r.subject, (s = truth.minuteSeries(r.subject)));
    return { ...r, truth: s.get(r.minute) ?? null };
  });
}
