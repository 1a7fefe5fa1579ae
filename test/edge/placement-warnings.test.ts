import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioObject } from '../../src/scenario/load.js';

function scenario(sensors: object[], extra: object = {}): object {
  return {
    version: 1,
    name: 'placements',
    start: '2026-03-02T08:00',
    duration: '1h',
    organization: { name: 'Acme' },
    ...extra,
    sites: [
      {
        name: 'HQ',
        timezone: 'Europe/Paris',
        buildings: [
          {
            name: 'Main',
            floors: [
              {
                name: 'G',
                level: 0,
                rooms: [
                  {
                    name: 'A',
                    polygon: [
                      [0, 0],
                      [10, 0],
                      [10, 10],
                      [0, 10],
                    ],
                  },
                  {
                    name: 'B',
                    polygon: [
                      [10, 0],
                      [20, 0],
                      [20, 10],
                      [10, 10],
                    ],
                  },
                ],
                doors: [
                  {
                    name: 'AB',
                    line: [
                      [10, 3],
                      [10, 6],
                    ],
                    between: ['A', 'B'],
                  },
                ],
                hives: [{ name: 'H', position: [5, 5] }],
                sensors,
                warm_objects: [
                  { name: 'Radiator', kind: 'radiator', position: [1, 0.2], size: [1.2, 0.2], temperature: 45 },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

function warnings(doc: object): string[] {
  const r = loadScenarioObject(doc, 'placements.yaml');
  if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
  return r.warnings.map(formatDiagnostic);
}

describe('validation of frame sensor placements', () => {
  it('warns, at the sensor, when a presence sensor sees nothing of its room', () => {
    const w = warnings(scenario([{ name: 'Lost', mode: 'presence', room: 'A', center: [13, 5], height: 3 }]));
    expect(w.some((m) => /sensors\[0\]\.center/.test(m) && /sees nothing of room `A`/.test(m))).toBe(true);
  });

  it('warns when a traffic sensor does not cover its whole door line', () => {
    const w = warnings(scenario([{ name: 'Door', mode: 'traffic', door: 'AB', center: [10, 4.5], height: 2.4 }]));
    expect(w.some((m) => /does not cover the whole line of door `AB`/.test(m))).toBe(true);
  });

  it('warns about heights outside 2.4–4.6 m and is quiet for a good placement', () => {
    expect(
      warnings(scenario([{ name: 'High', mode: 'presence', room: 'A', center: [5, 5], height: 5.5 }])).join('\n'),
    ).toMatch(/height 5.5 m is outside/);
    expect(warnings(scenario([{ name: 'Good', mode: 'presence', room: 'A', center: [5, 5], height: 3 }]))).toEqual([]);
  });

  it('reads warm objects, frame rates and the thermal header into the model', () => {
    const r = loadScenarioObject(
      scenario([{ name: 'Good', mode: 'presence', room: 'A', center: [5, 5], fps: 5 }], {
        thermal: { ambient: 24, hvac: { amplitude: 0.2, period: '30m' }, frame_fleet_max: 0 },
      }),
      'x.yaml',
    );
    if (!r.ok) throw new Error('does not load');
    expect(r.model.thermal).toMatchObject({ ambientC: 24, hvacAmplitudeK: 0.2, hvacPeriodMs: 1_800_000 });
    expect(r.model.thermal?.objects.map((o) => o.name)).toEqual(['Radiator']);
    expect(r.model.sensors[0]?.fps).toBe(5);
    expect(r.model.fidelity).toBe('model'); // above frame_fleet_max: 0
  });
});

describe('frame rates', () => {
  it('come from sensor_defaults unless the sensor gives its own', () => {
    const doc = {
      ...(scenario([
        { name: 'Own', mode: 'presence', room: 'A', center: [5, 5], fps: 5 },
        { name: 'Default', mode: 'presence', room: 'A', center: [5, 2] },
      ]) as Record<string, unknown>),
      sensor_defaults: { fps: 4 },
    };
    const r = loadScenarioObject(doc, 'x.yaml');
    if (!r.ok) throw new Error('does not load');
    expect(r.model.sensors.map((s) => s.fps)).toEqual([5, 4]);
  });
});
