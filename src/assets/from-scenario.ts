import type { OrganisationModel, ScenarioModel } from '../scenario/model.js';
import { AssetCatalogue } from './catalogue.js';
import type { OrganisationAssets } from './model.js';

/**
 * The one function that turns a scenario into the platform's assets: each of the scenario's
 * organisations with its spaces, devices, users and clients, in the scenario's order, without
 * what only the simulator reads (people, faults, thermal scenes, file positions). A file of
 * one organisation gives it everything; a file of several (`organizations:`) says which sites,
 * users and clients each owns, and a site's buildings, floors and devices follow their site.
 */
export function organisationsFromScenario(model: ScenarioModel): OrganisationAssets[] {
  if (model.organisations === undefined) return [assetsOf(model, null)];
  return model.organisations.map((o) => assetsOf(model, o));
}

/** The assets of a scenario of one organisation; a scenario of several is refused (use organisationsFromScenario). */
export function assetsFromScenario(model: ScenarioModel): OrganisationAssets {
  const all = organisationsFromScenario(model);
  if (all.length !== 1)
    throw new Error(`scenario ${model.name} declares ${all.length} organisations: use organisationsFromScenario`);
  return all[0] as OrganisationAssets;
}

/** A catalogue filled with these scenarios' organisations (tests, benchmarks, the CLI). */
export function catalogueFromScenario(...models: ScenarioModel[]): AssetCatalogue {
  return new AssetCatalogue(models.flatMap(organisationsFromScenario));
}

/** One organisation's share of the model (null: the only organisation, which owns everything). */
function assetsOf(model: ScenarioModel, o: OrganisationModel | null): OrganisationAssets {
  const sites = o === null ? null : new Set(o.siteIds);
  const floors = sites === null ? null : new Set(model.floors.filter((f) => sites.has(f.siteId)).map((f) => f.id));
  const users = o === null ? null : new Set(o.userIds);
  const clients = o === null ? null : new Set(o.clientIds);
  const onSite = (x: { siteId: string }): boolean => sites === null || sites.has(x.siteId);
  const onFloor = (x: { floorId: string }): boolean => floors === null || floors.has(x.floorId);
  return {
    org: o === null ? { id: model.org.id, name: model.org.name } : { id: o.id, name: o.name },
    sites: model.sites
      .filter((x) => sites === null || sites.has(x.id))
      .map(({ src: _s, ...x }) => ({ ...x, buildingIds: [...x.buildingIds] })),
    buildings: model.buildings.filter(onSite).map(({ src: _s, ...x }) => ({ ...x, floorIds: [...x.floorIds] })),
    floors: model.floors.filter(onSite).map(({ src: _s, ...x }) => ({
      ...x,
      roomIds: [...x.roomIds],
      zoneIds: [...x.zoneIds],
      doorIds: [...x.doorIds],
      hiveIds: [...x.hiveIds],
      sensorIds: [...x.sensorIds],
    })),
    // A scenario draws rooms and zones in the floor plan's own axes: rotation 0, no note.
    rooms: model.rooms.filter(onFloor).map(({ src: _s, ...x }) => ({ ...x, rotationDeg: 0, note: null })),
    zones: model.zones.filter(onFloor).map(({ src: _s, ...x }) => ({ ...x, rotationDeg: 0, note: null })),
    doors: model.doors.filter(onFloor).map(({ src: _s, ...x }) => x),
    hives: model.hives.filter(onFloor).map(({ src: _s, ...x }) => x),
    sensors: model.sensors.filter(onFloor).map(({ src: _s, ...x }) => x),
    users: model.users.filter((x) => users === null || users.has(x.id)).map(({ src: _s, ...x }) => x),
    clients: model.clients.filter((x) => clients === null || clients.has(x.clientId)).map(({ src: _s, ...x }) => x),
  };
}
