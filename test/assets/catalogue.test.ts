import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceIdentityTaken, type AssetCatalogue } from '../../src/assets/catalogue.js';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import type { Sensor } from '../../src/assets/model.js';
import { loadScenarioFile } from '../../src/scenario/load.js';

const loaded = loadScenarioFile(new URL('../../scenarios/two-tenants.yaml', import.meta.url).pathname);
const twoTenants = (): AssetCatalogue => {
  if (!loaded.ok) throw new Error('two-tenants.yaml does not load');
  return catalogueFromScenario(loaded.model);
};

const SEED = 20261128;

describe('the asset catalogue: device identities', () => {
  it('refuses a hive or sensor whose serial or MAC any organisation holds, and changes nothing', () => {
    const c = twoTenants();
    const [orgA, orgB] = [...c.orgs.keys()] as [string, string];
    const hiveA = c.list('hive', orgA)[0]!;
    const sensorA = c.list('sensor', orgA)[0]!;
    const hiveB = c.list('hive', orgB)[0]!;
    const version = c.version;
    expect(() => c.add('hive', orgB, { ...hiveB, id: 'hive_clone', serial: hiveA.serial })).toThrow(
      DeviceIdentityTaken,
    );
    expect(() =>
      c.add('sensor', orgB, { ...sensorA, id: 'sensor_clone', hiveId: hiveB.id, mac: sensorA.mac.toUpperCase() }),
    ).toThrow(DeviceIdentityTaken);
    expect(c.find('hive', 'hive_clone')).toBeUndefined();
    expect(c.find('sensor', 'sensor_clone')).toBeUndefined();
    expect(c.version).toBe(version);
    expect(c.identityFree({ kind: 'hive', serial: hiveA.serial })).toBe(false);
    expect(c.identityFree({ kind: 'hive', serial: 'HVNOTHERE000' })).toBe(true);
  });

  it('frees a MAC when its sensor is deleted', () => {
    const c = twoTenants();
    const [orgA, orgB] = [...c.orgs.keys()] as [string, string];
    const sensorA = c.list('sensor', orgA)[0]!;
    c.deleteSensor(orgA, sensorA.id);
    const hiveB = c.list('hive', orgB)[0]!;
    expect(
      c.add('sensor', orgB, { ...sensorA, id: 'sensor_moved', hiveId: hiveB.id, floorId: hiveB.floorId }).mac,
    ).toBe(sensorA.mac);
  });

  it(`holds each MAC at most once whatever the adds and deletes of two organisations (seed ${SEED})`, () => {
    const op = fc.oneof(
      fc.record({
        op: fc.constant('add' as const),
        org: fc.integer({ min: 0, max: 1 }),
        mac: fc.integer({ min: 0, max: 5 }),
        upper: fc.boolean(),
      }),
      fc.record({
        op: fc.constant('delete' as const),
        org: fc.integer({ min: 0, max: 1 }),
        mac: fc.integer({ min: 0, max: 5 }),
        upper: fc.constant(false),
      }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const c = twoTenants();
        const orgs = [...c.orgs.keys()] as [string, string];
        const orgAt = (k: number): string => (k === 0 ? orgs[0] : orgs[1]);
        const template = c.list('sensor', orgs[0])[0]!;
        const holder = new Map<number, { org: number; id: string }>();
        let n = 0;
        for (const o of ops) {
          const mac = `00-17-0d-ff-ff-ff-ff-0${o.mac}`;
          if (o.op === 'add') {
            const hive = c.list('hive', orgAt(o.org))[0]!;
            const sensor: Sensor = {
              ...template,
              id: `sensor_p${n++}`,
              hiveId: hive.id,
              floorId: hive.floorId,
              mac: o.upper ? mac.toUpperCase() : mac,
            };
            const free = !holder.has(o.mac);
            if (free) {
              c.add('sensor', orgAt(o.org), sensor);
              holder.set(o.mac, { org: o.org, id: sensor.id });
            } else expect(() => c.add('sensor', orgAt(o.org), sensor)).toThrow(DeviceIdentityTaken);
          } else {
            const h = holder.get(o.mac);
            // Deleting through the other organisation does nothing: its id is not theirs.
            if (h !== undefined && c.deleteSensor(orgAt(o.org), h.id) !== undefined) holder.delete(o.mac);
          }
          const macs = c.all('sensor').map((s) => s.mac.toLowerCase());
          expect(new Set(macs).size).toBe(macs.length);
        }
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('does not re-apply an overlay item that clones a held identity, nor the sensors of a refused hive', () => {
    const c = twoTenants();
    const [orgA, orgB] = [...c.orgs.keys()] as [string, string];
    const hiveA = c.list('hive', orgA)[0]!;
    const hiveB = c.list('hive', orgB)[0]!;
    const sensorB = c.list('sensor', orgB)[0]!;
    const floorB = c.get('floor', orgB, hiveB.floorId)!;
    const refused = c.applyOverlay(orgB, {
      changed: [
        { kind: 'hive', item: { ...hiveB, id: 'hive_clone', serial: hiveA.serial } },
        {
          kind: 'sensor',
          item: { ...sensorB, id: 'sensor_on_clone', mac: '00-17-0d-ee-ee-ee-ee-01', hiveId: 'hive_clone' },
        },
        {
          kind: 'floor',
          item: {
            ...floorB,
            hiveIds: [...floorB.hiveIds, 'hive_clone'],
            sensorIds: [...floorB.sensorIds, 'sensor_on_clone'],
          },
        },
      ],
      deleted: [],
      tags: [],
    });
    expect(refused.map((r) => [r.kind, r.id])).toEqual([
      ['hive', 'hive_clone'],
      ['sensor', 'sensor_on_clone'],
    ]);
    expect(c.get('floor', orgB, hiveB.floorId)!.hiveIds).not.toContain('hive_clone');
    expect(c.get('floor', orgB, hiveB.floorId)!.sensorIds).not.toContain('sensor_on_clone');
    expect(c.identityFree({ kind: 'sensor', mac: '00-17-0d-ee-ee-ee-ee-01' })).toBe(true);
  });
});
