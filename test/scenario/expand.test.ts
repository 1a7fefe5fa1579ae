import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandScenario, MAX_EXPANDED_ITEMS } from '../../src/scenario/expand.js';

type Tree = { sites: Array<{ rooms: Array<Record<string, unknown>>; sensors: Array<Record<string, unknown>> }> };

function expand(doc: unknown): Tree {
  const e = expandScenario(doc);
  expect(e.findings.filter((f) => f.severity === 'error')).toEqual([]);
  return e.tree as Tree;
}

const square = [
  [0, 0],
  [2, 0],
  [2, 2],
  [0, 2],
];

describe('expandScenario', () => {
  it('repeats an item with its index substituted and its coordinates shifted', () => {
    const t = expand({
      sites: [{ rooms: [{ name: 'R${i+1}', polygon: square, repeat: { count: 3, offset: [2, 0] } }] }],
    });
    expect(t.sites[0]?.rooms.map((r) => r['name'])).toEqual(['R1', 'R2', 'R3']);
    expect(t.sites[0]?.rooms[2]?.['polygon']).toEqual([
      [4, 0],
      [6, 0],
      [6, 2],
      [4, 2],
    ]);
  });

  it('nested repeats see the outer variables and add their offsets', () => {
    const t = expand({
      sites: [
        {
          name: 'S${s}',
          repeat: { count: 2, as: 's', offset: [100, 0] },
          rooms: [{ name: 'S${s}R${r}', polygon: square, repeat: { count: 2, as: 'r', offset: [0, 10] } }],
        },
      ],
    });
    expect(t.sites.map((s) => s.rooms.map((r) => r['name']))).toEqual([
      ['S0R0', 'S0R1'],
      ['S1R0', 'S1R1'],
    ]);
    expect(t.sites[1]?.rooms[1]?.['polygon']).toEqual([
      [100, 10],
      [102, 10],
      [102, 12],
      [100, 12],
    ]);
  });

  it('merges a template under the item, the item’s own fields winning', () => {
    const t = expand({
      templates: { box: { name: 'template', polygon: square, capacity: { max: 4, mid: 2 } } },
      sites: [{ rooms: [{ use: 'box', name: 'Mine' }] }],
    });
    expect(t.sites[0]?.rooms[0]).toEqual({ name: 'Mine', polygon: square, capacity: { max: 4, mid: 2 } });
  });

  it('expands a sensor grid, appending -ix-iy to plain names', () => {
    const t = expand({ sites: [{ sensors: [{ name: 'S', center: [1, 1], grid: { count: [2, 3], step: [4, 5] } }] }] });
    expect(t.sites[0]?.sensors.map((s) => [s['name'], s['center']])).toEqual([
      ['S-0-0', [1, 1]],
      ['S-1-0', [5, 1]],
      ['S-0-1', [1, 6]],
      ['S-1-1', [5, 6]],
      ['S-0-2', [1, 11]],
      ['S-1-2', [5, 11]],
    ]);
  });

  it('keeps names that already use ${gx}/${gy}', () => {
    const t = expand({
      sites: [{ sensors: [{ name: 'C${gy}.${gx}', center: [0, 0], grid: { count: [2, 1], step: [1, 1] } }] }],
    });
    expect(t.sites[0]?.sensors.map((s) => s['name'])).toEqual(['C0.0', 'C0.1']);
  });

  it('reports an unknown template, a cycle and an unused template', () => {
    const e = expandScenario({
      templates: { a: { use: 'b' }, b: { use: 'a' }, lonely: {} },
      sites: [{ rooms: [{ use: 'a' }, { use: 'nope' }] }],
    });
    expect(e.findings.map((f) => [f.severity, f.message])).toEqual([
      ['error', 'template cycle: a → b → a'],
      ['error', 'unknown template `nope`'],
      ['warning', 'template `lonely` is never used'],
    ]);
  });

  it('stops a runaway expansion with one error instead of exhausting memory', () => {
    const e = expandScenario({ sites: [{ repeat: 2000, rooms: [{ name: 'x', repeat: 2000 }] }] });
    expect(e.tooLarge).toBe(true);
    expect(e.findings.filter((f) => f.severity === 'error')).toHaveLength(1);
  });

  it('expands a 150,000-sensor fleet: the bound leaves room for issue 14’s 100k–150k-sensor fleets', () => {
    const t = expand({
      sites: [{ repeat: 300, sensors: [{ name: 'S', center: [0, 0], grid: { count: [25, 20], step: [4, 4] } }] }],
    });
    expect(t.sites).toHaveLength(300);
    expect(t.sites.reduce((n, s) => n + s.sensors.length, 0)).toBe(150_000);
  });

  it('expands exactly MAX_EXPANDED_ITEMS items and refuses the one past it where it is written', () => {
    const grid = (n: number): unknown => ({
      sites: [
        {
          rooms: [{ name: 'R', polygon: square }],
          sensors: [{ name: 'S', center: [0, 0], grid: { count: [n, 1], step: [1, 1] } }],
        },
      ],
    });
    // The site and the room are items too.
    expect(expandScenario(grid(MAX_EXPANDED_ITEMS - 2)).tooLarge).toBe(false);
    const e = expandScenario(grid(MAX_EXPANDED_ITEMS - 1));
    expect(e.tooLarge).toBe(true);
    expect(e.findings.filter((f) => f.severity === 'error')).toEqual([
      expect.objectContaining({
        path: ['sites', 0, 'sensors', 0, 'grid'],
        message: `grid of ${MAX_EXPANDED_ITEMS - 1} × 1 sensors exceeds the limit of ${MAX_EXPANDED_ITEMS} items (with what is already expanded)`,
      }),
    ]);
  });

  it('emits count copies, copy k shifted by k × offset (property, seed 42)', () => {
    fc.assert(
      fc.property(fc.nat(20), fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 }), (n, dx, dy) => {
        const t = expand({
          sites: [{ rooms: [{ name: 'R${i}', polygon: square, repeat: { count: n, offset: [dx, dy] } }] }],
        });
        const rooms = t.sites[0]?.rooms ?? [];
        expect(rooms).toHaveLength(n);
        rooms.forEach((r, k) => expect((r['polygon'] as number[][])[0]).toEqual([k * dx + 0, k * dy + 0]));
      }),
      { seed: 42, numRuns: 100 },
    );
  });
});
