import type { Store } from '../../src/cloud/store/port.js';
import type { PresenceMinuteRow } from '../../src/cloud/presence.js';
import type { TrafficMinuteRow } from '../../src/cloud/traffic.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * Everything a store holds per minute for a scenario's spaces (presence) and sensors (traffic),
 * in canonical order (by id, then minute): two stores hold the same results exactly when these
 * are equal, whatever order their rows were written in (a resumed run against an uninterrupted one).
 */
export async function storedSeries(store: Store, model: ScenarioModel): Promise<{ presence: PresenceMinuteRow[]; traffic: TrafficMinuteRow[] }> {
  const spaces = [...model.floors, ...model.rooms, ...model.zones].map((s) => s.id).sort();
  const sensors = model.sensors.map((s) => s.id).sort();
  const presence: PresenceMinuteRow[] = [];
  for (const id of spaces) presence.push(...(await store.presenceMinutes(id)));
  const traffic: TrafficMinuteRow[] = [];
  for (const id of sensors) traffic.push(...(await store.trafficMinutes(id)));
  return { presence, traffic };
}
