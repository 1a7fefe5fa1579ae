import type { AssetCatalogue } from '../assets/catalogue.js';
import type { AssetSnapshot } from '../assets/model.js';
import type { AssetRow } from '../store/port.js';

/** The catalogue's space hierarchy as store rows (site → building → floor → room/zone), each with its site's zone. */
export function assetRows(c: AssetCatalogue): AssetRow[] {
  const zoneOf = (id: string): string => c.timezoneOf(id);
  const rows: AssetRow[] = [];
  for (const s of c.all('site'))
    rows.push({ id: s.id, kind: 'site', parentId: null, name: s.name, timezone: s.timezone });
  for (const b of c.all('building'))
    rows.push({ id: b.id, kind: 'building', parentId: b.siteId, name: b.name, timezone: zoneOf(b.id) });
  for (const f of c.all('floor'))
    rows.push({ id: f.id, kind: 'floor', parentId: f.buildingId, name: f.name, timezone: zoneOf(f.id) });
  for (const r of c.all('room'))
    rows.push({ id: r.id, kind: 'room', parentId: r.floorId, name: r.name, timezone: zoneOf(r.id) });
  for (const z of c.all('zone'))
    rows.push({ id: z.id, kind: 'zone', parentId: z.roomId ?? z.floorId, name: z.name, timezone: zoneOf(z.id) });
  return rows;
}

/** IANA zone of the site holding a building, floor, room, zone or sensor of a fixed set of assets (UTC when unknown). */
export function zoneOfSpace(model: AssetSnapshot): (spaceId: string) => string {
  const siteZone = new Map(model.sites.map((s) => [s.id, s.timezone] as const));
  const zones = new Map<string, string>();
  for (const b of model.buildings) zones.set(b.id, siteZone.get(b.siteId) ?? 'UTC');
  for (const f of model.floors) zones.set(f.id, siteZone.get(f.siteId) ?? 'UTC');
  for (const r of model.rooms) zones.set(r.id, zones.get(r.floorId) ?? 'UTC');
  for (const z of model.zones) zones.set(z.id, zones.get(z.floorId) ?? 'UTC');
  for (const s of model.sensors) zones.set(s.id, zones.get(s.floorId) ?? 'UTC');
  return (id) => zones.get(id) ?? siteZone.get(id) ?? 'UTC';
}
