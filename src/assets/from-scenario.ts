import type { ScenarioModel } from '../scenario/model.js';
import { AssetCatalogue } from './catalogue.js';
import type { OrganisationAssets } from './model.js';

/**
 * The one function that turns a scenario into the platform's assets: the scenario's
 * organisation with its spaces, devices, users and clients, in the scenario's order, without
 * what only the simulator reads (people, faults, thermal scenes, file positions).
 */
export function assetsFromScenario(model: ScenarioModel): OrganisationAssets {
  return {
    org: { id: model.org.id, name: model.org.name },
    sites: model.sites.map(({ src: _s, ...x }) => ({ ...x, buildingIds: [...x.buildingIds] })),
    buildings: model.buildings.map(({ src: _s, ...x }) => ({ ...x, floorIds: [...x.floorIds] })),
    floors: model.floors.map(({ src: _s, ...x }) => ({ ...x, roomIds: [...x.roomIds], zoneIds: [...x.zoneIds], doorIds: [...x.doorIds], hiveIds: [...x.hiveIds], sensorIds: [...x.sensorIds] })),
    // A scenario draws rooms and zones in the floor plan's own axes: rotation 0, no note.
    rooms: model.rooms.map(({ src: _s, ...x }) => ({ ...x, rotationDeg: 0, note: null })),
    zones: model.zones.map(({ src: _s, ...x }) => ({ ...x, rotationDeg: 0, note: null })),
    doors: model.doors.map(({ src: _s, ...x }) => x),
    hives: model.hives.map(({ src: _s, ...x }) => x),
    sensors: model.sensors.map(({ src: _s, ...x }) => x),
    users: model.users.map(({ src: _s, ...x }) => x),
    clients: model.clients.map(({ src: _s, ...x }) => x),
  };
}

/** A catalogue filled with these scenarios' organisations (tests, benchmarks, the CLI). */
export function catalogueFromScenario(...models: ScenarioModel[]): AssetCatalogue {
  return new AssetCatalogue(models.map(assetsFromScenario));
}
