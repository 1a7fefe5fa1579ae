import { describe, expect, it } from 'vitest';
import {
  assetsFromScenario,
  catalogueFromScenario,
  organisationsFromScenario,
} from '../../src/assets/from-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

const load = (name: string): ScenarioModel => {
  const r = loadScenarioFile(new URL(`../../scenarios/${name}`, import.meta.url).pathname);
  if (!r.ok) throw new Error(`${name} does not load`);
  return r.model;
};

describe('assets from a scenario', () => {
  it('gives a single-organisation scenario one organisation owning everything', () => {
    const m = load('quickstart.yaml');
    const [only, ...rest] = organisationsFromScenario(m);
    expect(rest).toEqual([]);
    expect(only!.org).toEqual(m.org);
    expect(only!.sensors).toHaveLength(m.sensors.length);
    expect(only!.clients.map((c) => c.clientId)).toEqual(m.clients.map((c) => c.clientId));
    expect(assetsFromScenario(m)).toEqual(only);
  });

  it('splits a scenario of several organisations along its sites: every asset in exactly one organisation', () => {
    const m = load('two-tenants.yaml');
    const orgs = organisationsFromScenario(m);
    expect(
      orgs.map((o) => [
        o.org.name,
        o.sites.length,
        o.floors.length,
        o.sensors.length,
        o.users.length,
        o.clients.length,
      ]),
    ).toEqual([
      ['Acme', 1, 1, 6, 1, 1],
      ['Globex', 1, 2, 12, 1, 1],
    ]);
    for (const kind of ['sites', 'buildings', 'floors', 'rooms', 'zones', 'doors', 'hives', 'sensors'] as const) {
      const ids = orgs.flatMap((o) => o[kind].map((x) => x.id));
      expect(new Set(ids).size, kind).toBe(m[kind].length);
    }
    for (const o of orgs) {
      const floors = new Set(o.floors.map((f) => f.id));
      expect(o.sensors.every((s) => floors.has(s.floorId))).toBe(true);
      expect(o.hives.every((h) => floors.has(h.floorId))).toBe(true);
    }
    expect(() => assetsFromScenario(m)).toThrow(/declares 2 organisations/);
  });

  it('fills a catalogue in which each organisation sees only its own', () => {
    const m = load('two-tenants.yaml');
    const c = catalogueFromScenario(m);
    const [acme, globex] = m.organisations!;
    expect(c.orgs.size).toBe(2);
    const globexSensor = m.sensors.find((s) =>
      globex!.siteIds.includes(m.floors.find((f) => f.id === s.floorId)!.siteId),
    )!;
    expect(c.get('sensor', globex!.id, globexSensor.id)).toBeDefined();
    expect(c.get('sensor', acme!.id, globexSensor.id)).toBeUndefined();
  });
});
