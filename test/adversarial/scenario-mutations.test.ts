import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { cases, limitMs, report, SEED } from './budget.js';

/**
 * Scenario mutations (issue 16, finding 5): valid scenario files, mutated structurally (a
 * value swapped for a hostile one, a key dropped or misspelt, an item duplicated, counts
 * blown up) and textually (bytes flipped, the text cut short, YAML syntax spliced in, alias
 * bombs), are loaded by the validator. Every case must return within 5 s without throwing, and
 * every refusal must be located: `file:line:col path: message`, never an "internal error".
 */
const FILE = 'mutant.yaml';

/** A small file that still reaches most rules: templates, grids, repeats, doors, people, calibration, several organisations. */
const SMALL = `version: 1
name: small
seed: 3
start: "2026-03-02T08:00"
duration: 1h
templates:
  desk-room: { polygon: [[0, 0], [4, 0], [4, 4], [0, 4]], capacity: { max: 4, mid: 2 } }
organizations:
  - name: Acme
    users: [{ username: a@acme.test }]
    clients: [{ name: bot, description: reads }]
    sites:
      - name: HQ
        timezone: Europe/Paris
        buildings:
          - name: Main
            floors:
              - name: Ground
                level: 0
                calibration_points: [{ timestamp: "2026-03-02T09:00", occupancy: 3 }]
                rooms:
                  - { name: "Room \${i}", use: desk-room, repeat: { count: 2, offset: [4, 0] } }
                  - { name: Hall, polygon: [[0, 4], [8, 4], [8, 6], [0, 6]] }
                zones:
                  - { name: Corner, room: Room 0, polygon: [[0, 0], [1, 0], [1, 1]] }
                doors:
                  - { name: Entry, line: [[0, 4.5], [0, 5.5]], entrance: Hall }
                  - { name: Inner, line: [[1, 4], [2, 4]], between: [Hall, Room 0] }
                hives:
                  - { name: H, position: [4, 5] }
                sensors:
                  - { name: P, mode: presence, room: Room 0, center: [1, 1], grid: { count: [2, 2], step: [2, 2] } }
                  - { name: T, mode: traffic, door: Entry, center: [0, 5] }
                people:
                  - { name: Staff, count: 4, desks: [Room 0, Room 1], arrival: { mean: "08:10", sd: 5m }, departure: { mean: "08:50", sd: 5m } }
  - name: Globex
    sites:
      - name: HQ
        timezone: America/Santiago
        buildings:
          - name: Tower
            floors:
              - name: One
                level: 1
                rooms: [{ name: Office, polygon: [[0, 0], [6, 0], [6, 6], [0, 6]] }]
                hives: [{ name: H, position: [3, 3] }]
                sensors: [{ name: S, mode: presence, room: Office, center: [3, 3] }]
`;

const shipped = (name: string): string => readFileSync(new URL(`../../scenarios/${name}`, import.meta.url), 'utf8');
/** Bases, weighted towards the small file: a load of quickstart costs ~25 ms, the small one a few. */
const BASES: Array<{ name: string; text: string; doc: unknown; paths: Path[] }> = [
  ['small', SMALL],
  ['dst-santiago.yaml', shipped('dst-santiago.yaml')],
  ['quickstart.yaml', shipped('quickstart.yaml')],
].map(([name, text]) => {
  const doc = parse(text as string) as unknown;
  return { name: name as string, text: text as string, doc, paths: pathsOf(doc) };
});

type Path = Array<string | number>;

function pathsOf(doc: unknown): Path[] {
  const out: Path[] = [];
  const walk = (node: unknown, path: Path): void => {
    out.push(path);
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, [...path, i]));
    else if (typeof node === 'object' && node !== null)
      for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(doc, []);
  return out.filter((p) => p.length > 0);
}

const HOSTILE: unknown[] = [
  1e10,
  -1,
  0,
  -0.5,
  2 ** 53,
  1e308,
  -1e308,
  'NaN',
  '',
  ' ',
  null,
  true,
  [],
  {},
  [[]],
  'x'.repeat(5000),
  '\u0000',
  'a\u202Eb',
  '\uFFFD',
  '+99:00',
  '2026-03-02T08:00+99:00',
  '2026-13-45T25:61',
  'europe/paris',
  'Mars/Olympus',
  '1e10h',
  '99999999d',
  '-5m',
  '${i}',
  '${nope}',
  { count: [2, 1e10], step: [1, 1] },
  { count: 1e9 },
  [
    [0, 0],
    [1e300, 0],
    [0, 1e300],
  ],
  [
    [0, 0],
    [1, 1],
    [1, 0],
    [0, 1],
  ],
  Array.from({ length: 300 }, (_, i) => [Math.cos(i), Math.sin(i)]),
  { use: 'nope' },
  { repeat: 1e9 },
  [0, 0, 0],
  ['a', 'b'],
];

const SYNTAX = [
  '&a [1, 2]',
  '*a',
  '<<: *a',
  '!!binary AAAA',
  '\t',
  '{',
  '[',
  ']',
  '}',
  ': :',
  '- - -',
  '"',
  "'",
  '%YAML 1.1',
  '---',
  '...',
  '? ',
  '|',
  '>-',
  '#',
  '@',
  '`',
  '!!python/object:os.system',
  '\u0000',
  '\uFEFF',
  '\r',
];

/** 9 levels of 9 aliases each: 387 million nodes if expanded. */
const ALIAS_BOMB = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`;

const clone = <T>(x: T): T => structuredClone(x);

function setAt(doc: unknown, path: Path, value: unknown): void {
  let node = doc as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) node = node[seg] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === DELETE) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = value;
}

const DELETE = Symbol('delete');

type Mutation =
  | { kind: 'set'; path: number; value: number }
  | { kind: 'delete'; path: number }
  | { kind: 'rename'; path: number; suffix: string }
  | { kind: 'duplicate'; path: number }
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'cut'; at: number }
  | { kind: 'splice'; at: number; token: number }
  | { kind: 'bomb' };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 25, arbitrary: fc.record({ kind: fc.constant('set' as const), path: fc.nat(), value: fc.nat() }) },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('delete' as const), path: fc.nat() }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('rename' as const),
      path: fc.nat(),
      suffix: fc.constantFrom('_', 's', 'X', '\u202E'),
    }),
  },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), path: fc.nat() }) },
  {
    weight: 10,
    arbitrary: fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }) },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('splice' as const), at: fc.nat(), token: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'bomb' as const }) },
);

/** The mutated file's bytes. */
function mutate(base: (typeof BASES)[number], muts: Mutation[]): Buffer {
  let doc = clone(base.doc);
  let text: string | null = null;
  for (const m of muts) {
    if (m.kind === 'flip' || m.kind === 'cut' || m.kind === 'splice' || m.kind === 'bomb') {
      text ??= stringify(doc);
      if (m.kind === 'bomb') text = ALIAS_BOMB + text;
      else {
        const at: number = m.at % (text.length + 1);
        if (m.kind === 'cut') text = text.slice(0, at);
        else if (m.kind === 'splice')
          text = text.slice(0, at) + (SYNTAX[m.token % SYNTAX.length] as string) + text.slice(at);
        else {
          const bytes = Buffer.from(text, 'utf8');
          if (bytes.length > 0) bytes[m.at % bytes.length] = m.byte;
          return bytes;
        }
      }
      continue;
    }
    if (text !== null) continue; // structural mutations apply to the tree, before any text mutation
    const paths = pathsOf(doc);
    if (paths.length === 0) continue;
    const path = paths[m.path % paths.length] as Path;
    if (m.kind === 'set') setAt(doc, path, clone(HOSTILE[m.value % HOSTILE.length]));
    else if (m.kind === 'delete') setAt(doc, path, DELETE);
    else if (m.kind === 'rename' && typeof path[path.length - 1] === 'string') {
      let parent = doc as Record<string, unknown>;
      for (const seg of path.slice(0, -1)) parent = parent[seg as string] as Record<string, unknown>;
      const key = path[path.length - 1] as string;
      parent[key + m.suffix] = parent[key];
      delete parent[key];
    } else if (m.kind === 'duplicate') {
      const parentPath = path.slice(0, -1);
      let parent: unknown = doc;
      for (const seg of parentPath) parent = (parent as Record<string | number, unknown>)[seg];
      if (Array.isArray(parent)) parent.push(clone(parent[Number(path[path.length - 1])]));
    }
    if (doc === undefined) doc = {};
  }
  return Buffer.from(text ?? stringify(doc), 'utf8');
}

describe('scenario mutations', () => {
  it(
    `never hang, crash or refuse without a location (${cases(2000, 2000)} cases, seed ${SEED})`,
    () => {
      const n = cases(2000, 2000);
      let accepted = 0;
      let refused = 0;
      let diagnostics = 0;
      let maxMs = 0;
      let loadMs = 0;
      let slowest = '';
      const problems: string[] = [];
      fc.assert(
        fc.property(fc.nat({ max: 9 }), fc.array(mutationArb, { minLength: 1, maxLength: 4 }), (b, muts) => {
          // Small file 6 times in 10, the shipped ones 2 each.
          const base = BASES[b < 6 ? 0 : b < 8 ? 1 : 2] as (typeof BASES)[number];
          const bytes = mutate(base, muts);
          const t0 = performance.now();
          let r: ReturnType<typeof loadScenarioText>;
          try {
            // The loader takes text; invalid UTF-8 reaches it as the decoder's replacement characters, as from a file.
            r = loadScenarioText(bytes.toString('utf8'), FILE);
          } catch (err) {
            problems.push(`${base.name} ${JSON.stringify(muts)}: threw ${(err as Error).message}`);
            return true;
          }
          const ms = performance.now() - t0;
          loadMs += ms;
          if (ms > maxMs) [maxMs, slowest] = [ms, `${base.name} ${JSON.stringify(muts)}`];
          if (ms > 5000) problems.push(`${base.name} ${JSON.stringify(muts)}: took ${ms.toFixed(0)} ms`);
          if (r.ok) {
            accepted++;
            return true;
          }
          refused++;
          const errors = r.diagnostics.filter((d) => d.severity === 'error');
          diagnostics += errors.length;
          if (errors.length === 0) problems.push(`${base.name} ${JSON.stringify(muts)}: refused without an error`);
          for (const d of errors) {
            const line = formatDiagnostic(d);
            if (!/^mutant\.yaml:\d+:\d+[ :]/.test(line) || d.line < 1 || d.col < 1)
              problems.push(`${base.name} ${JSON.stringify(muts)}: unlocated ${line.slice(0, 200)}`);
            if (/internal error|Maximum call stack|is not a function|undefined/i.test(d.message))
              problems.push(`${base.name} ${JSON.stringify(muts)}: ${line.slice(0, 200)}`);
            if (line.length > 2000) problems.push(`${base.name}: a diagnostic of ${line.length} characters`);
          }
          return true;
        }),
        // Problems are collected, not thrown: one run reports them all, each with its base and mutations to replay.
        { seed: SEED, numRuns: n },
      );
      report('scenario-mutations', {
        cases: n,
        accepted,
        refused,
        diagnostics,
        crashes: 0,
        problems: problems.length,
        maxMs,
        loadSeconds: loadMs / 1000,
      });
      expect(problems.slice(0, 10)).toEqual([]);
      expect(maxMs, slowest).toBeLessThan(5000);
    },
    limitMs(120_000),
  );
});
