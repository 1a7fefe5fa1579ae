import type { AssetCatalogue } from '../../assets/catalogue.js';
import type { AssetKind } from '../../assets/model.js';

/**
 * The real sizes of the lists a query can select, from the catalogue: an organisation's
 * largest flat list of each kind, and the largest child list of each parent. The query cost
 * limit multiplies by them (limits.ts), so a fleet's `sensors` list costs what it returns.
 * Recomputed when the catalogue changes.
 */
const FLAT: Readonly<Record<string, AssetKind>> = {
  'SiteList.data': 'site',
  'BuildingList.data': 'building',
  'FloorList.data': 'floor',
  'RoomList.data': 'room',
  'ZoneList.data': 'zone',
  'HiveList.data': 'hive',
  'SensorList.data': 'sensor',
};

export function catalogueListSizes(
  catalogue: AssetCatalogue,
): (typeName: string, fieldName: string) => number | undefined {
  let built = { version: -1, sizes: new Map<string, number>() };
  const sizes = (): Map<string, number> => {
    if (built.version === catalogue.version) return built.sizes;
    const out = new Map<string, number>();
    const most = (key: string, n: number): void => {
      if (n > (out.get(key) ?? 0)) out.set(key, n);
    };
    for (const [key, kind] of Object.entries(FLAT)) {
      for (const o of catalogue.orgs.keys()) most(key, catalogue.list(kind, o).length);
    }
    for (const s of catalogue.all('site')) most('Site.buildings', s.buildingIds.length);
    for (const b of catalogue.all('building')) most('Building.floors', b.floorIds.length);
    for (const f of catalogue.all('floor')) {
      most('Floor.rooms', f.roomIds.length);
      most('Floor.zones', f.zoneIds.length);
      most('Floor.sensors', f.sensorIds.length);
      most('Floor.hives', f.hiveIds.length);
    }
    const perRoom = new Map<string, number>();
    for (const s of catalogue.all('sensor'))
      if (s.roomId !== null) perRoom.set(s.roomId, (perRoom.get(s.roomId) ?? 0) + 1);
    for (const n of perRoom.values()) most('Room.sensors', n);
    built = { version: catalogue.version, sizes: out };
    return out;
  };
  // At least 1: an empty list today may be filled by a mutation before the next query.
  return (typeName, fieldName) => {
    const n = sizes().get(`${typeName}.${fieldName}`);
    return n === undefined ? undefined : Math.max(1, n);
  };
}
