import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/port.js';

import type { ScenarioModel } from '../../src/scenario/model.js';
import type { PresenceMinuteRow, TrafficMinuteRow } from '../../src/store/rows.js';

/**
 * Everything a store holds per minute for a scenario's spaces (presence) and sensors (traffic),
 * in canonical order (by id, then minute): two stores hold the same results exactly when these
 * are equal, whatever order their rows were written in (a resumed run against an uninterrupted one).
 */
export async function storedSeries(
  store: Store,
  model: ScenarioModel,
): Promise<{ presence: PresenceMinuteRow[]; traffic: TrafficMinuteRow[] }> {
  const spaces = [...model.floors, ...model.rooms, ...model.zones].map((s) => s.id).sort();
  const sensors = model.sensors.map((s) => s.id).sort();
  const presence: PresenceMinuteRow[] = [];
  for (const id of spaces) presence.push(...(await store.presenceMinutes(id)));
  const traffic: TrafficMinuteRow[] = [];
  for (const id of sensors) traffic.push(...(await store.trafficMinutes(id)));
  return { presence, traffic };
}

/**
 * Everything a run leaves in a SQLite store that users read, as one text: per-minute series (and
 * with `hourly`, the 1h rollups) and the event outbox without its row ids. Two runs that must be
 * byte-identical (thread layouts) compare these texts.
 */
export function storedRunText(db: string, model: ScenarioModel, o: { hourly?: boolean } = {}): string {
  const store = new SqliteStore(db);
  try {
    const spaces = [...model.floors, ...model.rooms, ...model.zones].map((s) => s.id);
    return JSON.stringify({
      presence: spaces.map((id) => store.presenceMinutes(id)),
      ...(o.hourly ? { hourly: spaces.map((id) => store.presenceSeries(id, '1h', 0, Number.MAX_SAFE_INTEGER)) } : {}),
      traffic: model.sensors.filter((s) => s.mode === 'traffic').map((s) => store.trafficMinutes(s.id)),
      events: store.events().map(({ id: _id, ...e }) => e),
    });
  } finally {
    store.close();
  }
}
