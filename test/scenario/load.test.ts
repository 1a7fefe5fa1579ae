import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { footprintTransform } from '../../src/core/footprint.js';
import { bbox, pointInPolygon } from '../../src/core/geometry.js';
import { stableId } from '../../src/core/ids.js';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioObject, loadScenarioText, type LoadResult } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

const scenariosDir = fileURLToPath(new URL('../../scenarios/', import.meta.url));

function model(r: LoadResult): ScenarioModel {
  if (!r.ok) throw new Error(r.diagnostics.map(formatDiagnostic).join('\n'));
  return r.model;
}

const minimal = {
  version: 1,
  name: 'tiny',
  start: '2026-03-02T08:00',
  duration: '1h',
  organization: { name: 'Acme' },
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
                  name: 'R',
                  polygon: [
                    [0, 0],
                    [4, 0],
                    [4, 4],
                    [0, 4],
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};

describe('shipped scenarios', () => {
  const files = readdirSync(scenariosDir).filter((f) => /\.(ya?ml|json)$/.test(f));

  it('ships quickstart, office-day and fleet', () => {
    expect(files).toEqual(expect.arrayContaining(['quickstart.yaml', 'office-day.yaml', 'fleet.yaml']));
  });

  it.each(files)('%s loads with zero errors and zero warnings', (file) => {
    const r = loadScenarioFile(`${scenariosDir}${file}`);
    expect(r.ok ? r.warnings.map(formatDiagnostic) : r.diagnostics.map(formatDiagnostic)).toEqual([]);
  });

  it('quickstart fully covers the open office, meeting room and kitchen with presence sensors', () => {
    const m = model(loadScenarioFile(`${scenariosDir}quickstart.yaml`));
    expect(m.sensors.filter((s) => s.mode === 'presence').length).toBeGreaterThanOrEqual(6);
    expect(m.sensors.filter((s) => s.mode === 'traffic').map((s) => s.name)).toEqual([
      'Front door counter',
      'Meeting door counter',
    ]);
    const views = m.sensors
      .filter((s) => s.mode === 'presence')
      .map((s) =>
        footprintTransform({ center: s.center, height: s.height, orientationDeg: s.orientationDeg, fovDeg: s.fovDeg }),
      );
    for (const name of ['Open office', 'Meeting room', 'Kitchen']) {
      const room = m.rooms.find((r) => r.name === name);
      if (room === undefined) throw new Error(name);
      const b = bbox(room.polygon);
      for (let x = b.minX + 0.05; x < b.maxX; x += 0.1) {
        for (let y = b.minY + 0.05; y < b.maxY; y += 0.1) {
          if (pointInPolygon(x, y, room.polygon))
            expect(
              views.some((v) => v.sees(x, y)),
              `${name} (${x}, ${y})`,
            ).toBe(true);
        }
      }
    }
  });

  it('quickstart resolves start time, ids, people and meetings', () => {
    const m = model(loadScenarioFile(`${scenariosDir}quickstart.yaml`));
    expect(m.startMs).toBe(Date.UTC(2026, 2, 2, 7, 0)); // 08:00 in Paris (UTC+1)
    expect(m.durationMs).toBe(3 * 3_600_000);
    expect(m.seed).toBe(7);
    expect(m.rooms.find((r) => r.name === 'Lobby')?.id).toBe(stableId('room', 'Acme', 'HQ', 'Main', 'Ground', 'Lobby'));
    expect(m.floors[0]?.id).toBe(stableId('space', 'Acme', 'HQ', 'Main', 'Ground'));
    expect(m.populations).toMatchObject([
      { count: 20, arrival: { meanMin: 8 * 60 + 15, sdMin: 15 }, departure: { meanMin: 10 * 60 + 40, sdMin: 10 } },
    ]);
    expect(m.meetings).toMatchObject([{ atMin: 540, durationMs: 1_800_000, attendees: 6 }]);
    expect(m.users).toHaveLength(1);
    expect(m.clients[0]?.clientId).toMatch(/^client_[0-9A-Za-z]{27}$/);
    const front = m.doors.find((d) => d.name === 'Front door');
    expect(front).toMatchObject({ entrance: true, fromRoomId: null });
    expect(m.populations[0]?.entranceDoorIds).toEqual([front?.id]);
    expect(m.zones[0]?.roomId).toBe(m.rooms.find((r) => r.name === 'Open office')?.id);
  });

  it('office-day runs 24 hours across midnight on three floors from one template', () => {
    const m = model(loadScenarioFile(`${scenariosDir}office-day.yaml`));
    expect(m.durationMs).toBe(24 * 3_600_000);
    expect(m.floors.map((f) => [f.name, f.level])).toEqual([
      ['Level 0', 0],
      ['Level 1', 1],
      ['Level 2', 2],
    ]);
    const people = m.populations.reduce((n, p) => n + p.count, 0);
    expect(people).toBeGreaterThanOrEqual(60);
    expect(people).toBeLessThanOrEqual(90);
    expect(m.sensors.length).toBeGreaterThanOrEqual(45);
    expect(m.sensors.length).toBeLessThanOrEqual(65);
  });

  it('fleet expands to at least 30,000 sensors in under 5 s of CPU from under 100 lines', async () => {
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(`${scenariosDir}fleet.yaml`, 'utf8').split('\n').length).toBeLessThan(100);
    // CPU time, not wall: other test files share the cores and would stretch a wall bound.
    const c0 = process.cpuUsage();
    const m = model(loadScenarioFile(`${scenariosDir}fleet.yaml`));
    const used = process.cpuUsage(c0);
    const ms = (used.user + used.system) / 1000;
    expect(m.sensors.length).toBeGreaterThanOrEqual(30_000);
    expect(ms).toBeLessThan(5000);
    expect(process.memoryUsage().heapUsed).toBeLessThan(500 * 1024 * 1024);
    expect(new Set(m.sensors.map((s) => s.mac)).size).toBe(m.sensors.length);
    expect(new Set(m.sensors.map((s) => s.id)).size).toBe(m.sensors.length);
    // Repeat offsets move every coordinate of building copy b by b × 60 m.
    const b2 = m.buildings.find((b) => b.name === 'B2');
    const room = m.rooms.find((r) => r.floorId === b2?.floorIds[0] && r.name === 'Core');
    expect(room?.polygon[0]).toEqual([60, 0]);
  });
});

describe('loading API', () => {
  it('loads a plain object with defaults applied and positions unknown', () => {
    const m = model(loadScenarioObject(minimal));
    expect(m).toMatchObject({ file: '<inline>', seed: 1, fidelity: 'frame', tickMs: 1000, batchIntervalMs: 10_000 }); // small fleet: frame fidelity by default
    expect(m.noise).toEqual({
      presence: { miss: 0.01, falsePositive: 0.002, jitterM: 0.08 },
      traffic: { miss: 0.02, crowdMiss: 0.15 },
    });
    expect(m.floors[0]?.outline).toEqual([
      [0, 0],
      [4, 0],
      [4, 4],
      [0, 4],
    ]);
    const bad = loadScenarioObject({ ...minimal, seed: 'x' });
    expect(bad).toMatchObject({ ok: false, diagnostics: [{ file: '<inline>', line: 0, col: 0, path: 'seed' }] });
  });

  it('overrides replace the seed, duration and fidelity of the file', () => {
    const m = model(loadScenarioObject(minimal, '<inline>', { seed: 99, durationMs: 5000, fidelity: 'frame' }));
    expect(m).toMatchObject({ seed: 99, durationMs: 5000, fidelity: 'frame' });
  });

  it('loads JSON text with positions', () => {
    const text = JSON.stringify({ ...minimal, fidelity: 'best' }, null, 2);
    const r = loadScenarioText(text, 'inline.json');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.diagnostics.map(formatDiagnostic)).toEqual([
        'inline.json:49:15 fidelity: expected "model" | "frame", got "best"',
      ]);
  });

  it('an explicit offset in start wins over the site zone', () => {
    const m = model(loadScenarioObject({ ...minimal, start: '2026-03-02T08:00Z' }));
    expect(m.startMs).toBe(Date.UTC(2026, 2, 2, 8, 0));
  });

  it('never throws, whatever the input', () => {
    for (const doc of [null, 42, 'text', [], { version: 1 }, { sites: 'x' }, { sites: [null, 3] }]) {
      const r = loadScenarioObject(doc);
      expect(r.ok).toBe(false);
    }
    expect(loadScenarioText('a: [1, 2\nb: }', 'x.yaml').ok).toBe(false);
  });

  it('reports every problem at once, sorted by line', () => {
    const r = loadScenarioText(
      'version: 2\nname: x\nstart: nope\nduration: 1h\norganization: { nme: A }\nsites: []\n',
      'x.yaml',
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      const lines = r.diagnostics.map((d) => d.line);
      expect(lines).toEqual([...lines].sort((a, b) => a - b));
      expect(r.diagnostics.map((d) => d.path)).toEqual(['version', 'organization.name', 'organization.nme', 'sites']);
    }
  });
});
