import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioText } from '../../src/scenario/load.js';

/** Each fixture holds one class of mistake; the expected lines point at the offending node. */
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function problems(name: string): string[] {
  const r = loadScenarioFile(fixture(name));
  if (r.ok) throw new Error(`${name} loaded without errors`);
  return r.diagnostics.map(
    (d) => `${d.line}:${d.col} ${d.path}: ${d.severity === 'warning' ? 'warning: ' : ''}${d.message}`,
  );
}

const F = 'sites[0].buildings[0].floors[0]';

describe('invalid scenario fixtures', () => {
  it('a YAML syntax error is a diagnostic with its line, not an exception', () => {
    expect(problems('syntax-error.yaml')).toEqual([expect.stringMatching(/^19:1 : syntax error: Flow map/)]);
  });

  it('an unknown field suggests the closest valid field', () => {
    expect(problems('unknown-field.yaml')).toEqual([
      `22:60 ${F}.sensors[0].feild_of_view: unknown field \`feild_of_view\`; did you mean \`field_of_view\`?`,
    ]);
  });

  it('wrong types name what was expected and what was found', () => {
    expect(problems('wrong-type.yaml')).toEqual([
      `13:20 ${F}.level: expected a number, got "two"`,
      `18:42 ${F}.hives[0].position[1]: expected a number, got "4m"`,
    ]);
  });

  it('a missing required field is reported at its item', () => {
    expect(problems('missing-field.yaml')).toEqual([`17:17 ${F}.rooms[2].polygon: missing required field \`polygon\``]);
  });

  it('bad enum values list the accepted values', () => {
    expect(problems('bad-enum.yaml')).toEqual([
      `18:56 ${F}.hives[0].backhaul: expected "wifi" | "cellular" | "ethernet", got "lora"`,
      `20:34 ${F}.sensors[0].mode: expected "presence" | "traffic", got "presense"`,
    ]);
  });

  it('an unknown IANA zone suggests the closest zone', () => {
    expect(problems('bad-timezone.yaml')).toEqual([
      '8:15 sites[0].timezone: unknown IANA time zone "Europe/Pari"; did you mean `Europe/Paris`?',
    ]);
  });

  it('bad duration and clock texts are both reported', () => {
    expect(problems('bad-time-text.yaml')).toEqual([
      '4:11 duration: bad duration "1 hour": expected e.g. 500ms, 90s, 30m, 1h30m, 1d',
      `20:49 ${F}.meetings[0].at: bad clock time "25:00": expected HH:MM (00:00–23:59)`,
    ]);
  });

  it('self-intersecting polygons and polygons under three points are rejected', () => {
    expect(problems('bad-polygon.yaml')).toEqual([
      `17:43 ${F}.rooms[2].polygon: room \`Bow tie\`: polygon is self-intersecting: edge 0 crosses edge 2`,
      `18:42 ${F}.rooms[3].polygon: needs at least 3 points, got 2`,
    ]);
  });

  it('references to unknown rooms and hives suggest the closest name', () => {
    expect(problems('unknown-reference.yaml')).toEqual([
      `19:73 ${F}.doors[1].between[1]: unknown room \`Ofice\` on floor \`Ground\`; did you mean \`Office\`?`,
      `23:50 ${F}.sensors[0].hive: unknown hive \`Hive\` on floor \`Ground\``,
      `25:50 ${F}.people[0].desks[0]: unknown room \`Offce\` on floor \`Ground\`; did you mean \`Office\`?`,
    ]);
  });

  it('a door that is not on the wall of the rooms it joins is rejected', () => {
    expect(problems('door-off-wall.yaml')).toEqual([
      `19:38 ${F}.doors[1].line: door \`Inner\` [5, 3]–[5, 4] is not on the boundary of room \`Lobby\``,
      `19:38 ${F}.doors[1].line: door \`Inner\` [5, 3]–[5, 4] is not on the boundary of room \`Office\``,
    ]);
  });

  it('hives and sensors outside the floor are rejected', () => {
    expect(problems('outside-floor.yaml')).toEqual([
      `18:38 ${F}.hives[0].position: hive \`H\` at [30, 4] is outside the floor`,
      `20:52 ${F}.sensors[0].center: sensor \`S\` centre [8, 40] is outside the floor outline`,
    ]);
  });

  it('duplicate names within a parent are rejected', () => {
    expect(problems('duplicate-name.yaml')).toEqual([
      `17:25 ${F}.rooms[2].name: duplicate room name \`Lobby\` in floor \`Ground\` (first used by item 0)`,
    ]);
  });

  it('a zone must lie inside its room', () => {
    expect(problems('zone-outside-room.yaml')).toEqual([
      `18:54 ${F}.zones[0].polygon: zone \`Desks\` extends outside its room \`Lobby\``,
    ]);
  });

  it('people need an entrance door on their floor', () => {
    expect(problems('no-entrance.yaml')).toEqual([
      `20:17 ${F}.people[0]: people \`Staff\`: floor \`Ground\` has no entrance door (add a door with \`entrance: <room>\`)`,
    ]);
  });

  it('out-of-range values are errors, heights outside 2.4–4.6 m only warnings', () => {
    expect(problems('ranges.yaml')).toEqual([
      `22:69 ${F}.sensors[0].height: warning: sensor \`S1\`: height 5.2 m is outside the supported 2.4–4.6 m`,
      `23:75 ${F}.sensors[1].sensitivity: must be ≤ 5, got 7`,
      `23:93 ${F}.sensors[1].field_of_view: must be < 180, got 200`,
      `25:84 ${F}.meetings[0].attendees: must be > 0, got 0`,
    ]);
  });

  it('a warning alone does not fail loading', () => {
    const r = loadScenarioFile(fixture('height-warning.yaml'));
    expect(r.ok).toBe(true);
    if (r.ok)
      expect(r.warnings.map(formatDiagnostic)).toEqual([
        expect.stringMatching(/height-warning\.yaml:20:69 .*sensors\[0\]\.height: warning: sensor `S1`: height 5\.2 m/),
      ]);
  });

  it('problems in template and repeat copies point at the use: and repeat item lines, named as written and as expanded', () => {
    expect(problems('template-repeat.yaml')).toEqual([
      `19:22 ${F}.rooms[1].polygon: room \`Pod 0\`: polygon is self-intersecting: edge 1 crosses edge 3`,
      `19:22 ${F}.rooms[1].polygon (expanded as ${F}.rooms[2].polygon \`Pod 1\`): room \`Pod 1\`: polygon is self-intersecting: edge 1 crosses edge 3`,
      `22:22 ${F}.rooms[2].use: unknown template \`smal-room\`; did you mean \`small-room\`?`,
      `27:25 ${F}.sensors[0].name: unknown variable \`j\` (defined here: i) in \`\${j}\``,
      `27:25 ${F}.sensors[0].name (expanded as ${F}.sensors[1].name \`S\${j}\`): duplicate sensor name \`S\${j}\` in floor \`Ground\` (first used by item 0)`,
    ]);
  });

  it('an unreadable file is one diagnostic at 1:1', () => {
    const r = loadScenarioFile(fixture('does-not-exist.yaml'));
    expect(r).toMatchObject({
      ok: false,
      diagnostics: [
        {
          line: 1,
          col: 1,
          message: expect.stringMatching(/^file not found \(shipped scenarios, by name: .*quickstart/),
          severity: 'error',
        },
      ],
    });
  });
});

describe('paths of expanded items', () => {
  it('a problem in the fifth YAML sensor after a grid names sensors[4] as written, and the expanded item', () => {
    const text = readFileSync(new URL('../../scenarios/quickstart.yaml', import.meta.url), 'utf8');
    const doc = parse(text) as {
      sites: Array<{ buildings: Array<{ floors: Array<{ sensors: Array<Record<string, unknown>> }> }> }>;
    };
    const sensors = doc.sites[0]!.buildings[0]!.floors[0]!.sensors;
    // Item 0 becomes a 2 × 2 grid (three more sensors before the others), item 4 gets a bad height.
    sensors[0] = { ...sensors[0], grid: { count: [2, 2], step: [0.5, 0.5] } };
    sensors[4] = { ...sensors[4], height: -1 };
    const r = loadScenarioText(stringify(doc), 'grid.yaml');
    expect(r.ok).toBe(false);
    const d = !r.ok ? r.diagnostics.find((x) => /height/.test(x.path)) : undefined;
    expect(d?.path).toMatch(
      /^sites\[0\]\.buildings\[0\]\.floors\[0\]\.sensors\[4\]\.height \(expanded as sites\[0\]\.buildings\[0\]\.floors\[0\]\.sensors\[7\]\.height `[^`]+`\)$/,
    );
  });
});
