import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioFile, loadScenarioText } from '../../src/scenario/load.js';

/**
 * Adversarial scenario inputs: each is refused fast with located `file:line:col path:
 * message` diagnostics, never a hang, an out-of-memory, an "internal error" or an
 * unbounded message. Every case runs well under a second; the bound asserted is 2 s.
 */
const BASE = (
  over: { start?: string; timezone?: string; name?: string; rooms?: string; sensors?: string } = {},
): string => `version: 1
name: ${over.name ?? 'bounded'}
start: "${over.start ?? '2026-03-02T08:00'}"
duration: 1h
organization: { name: Acme }
sites:
  - name: HQ
    timezone: ${over.timezone ?? 'Europe/Paris'}
    buildings:
      - name: Main
        floors:
          - name: Ground
            level: 0
            rooms:
${over.rooms ?? '              - { name: Office, polygon: [[0, 0], [14, 0], [14, 8], [0, 8]] }'}
            doors:
              - { name: Front, line: [[0, 3], [0, 4]], entrance: Office }
            hives:
              - { name: H, position: [8, 4] }
            sensors:
${over.sensors ?? '              - { name: S1, mode: presence, center: [8, 4] }'}
`;

const dir = mkdtempSync(join(tmpdir(), 'occusim-bounded-'));

/** Loads `text` as a file; returns its formatted diagnostics and how long it took. */
function refuse(text: string | Buffer, name = 'x.yaml'): { lines: string[]; ms: number } {
  const file = join(dir, name);
  writeFileSync(file, text);
  // CPU time, not wall: other test files share the cores and would stretch a wall bound.
  const c0 = process.cpuUsage();
  const r = loadScenarioFile(file);
  const used = process.cpuUsage(c0);
  const ms = (used.user + used.system) / 1000;
  if (r.ok) throw new Error('loaded without errors');
  const lines = r.diagnostics.map(formatDiagnostic);
  for (const l of lines) {
    expect(l).toMatch(/^.+:\d+:\d+[ :]/);
    expect(l).not.toMatch(/internal error/);
    expect(l.length).toBeLessThan(600);
  }
  // The findings took 26 s to forever; 5 s of CPU (the adversarial suite's bound per case)
  // tells those apart, where a 600 KB file's YAML parse alone takes 1–3 s.
  expect(ms).toBeLessThan(5000);
  return { lines, ms };
}

describe('bounded scenario inputs', () => {
  it('refuses a grid of 2 × 10^10 sensors at once, before expanding it', () => {
    const { lines } = refuse(
      BASE({
        sensors:
          '              - { name: "S-${gx}-${gy}", mode: presence, center: [1, 1], grid: { count: [2, 1e10], step: [1, 1] } }',
      }),
    );
    expect(lines).toEqual([
      expect.stringMatching(
        /:21:\d+ .*sensors\[0\]\.grid: grid of 2 × 10000000000 sensors exceeds the limit of \d+ items/,
      ),
    ]);
  });

  it('refuses a repeat count over the expansion limit at once', () => {
    const { lines } = refuse(
      BASE({ sensors: '              - { name: "S${i}", mode: presence, center: [1, 1], repeat: 1000000000 }' }),
    );
    expect(lines).toEqual([
      expect.stringMatching(/:21:\d+ .*sensors\[0\]\.repeat: repeat of 1000000000 exceeds the limit of \d+ items/),
    ]);
  });

  it('refuses a 700 × 700 sensor grid with a located limit, not a stack overflow', () => {
    const { lines } = refuse(
      BASE({
        sensors:
          '              - { name: "S-${gx}-${gy}", mode: presence, center: [1, 1], grid: { count: [700, 700], step: [0.01, 0.01] } }',
      }),
    );
    expect(lines[0]).toMatch(/grid of 700 × 700 sensors exceeds the limit/);
  });

  it('refuses a polygon of 20,000 vertices by its size instead of checking it quadratically', () => {
    const pts = Array.from(
      { length: 20_000 },
      (_, i) =>
        `[${(7 + 6 * Math.cos((2 * Math.PI * i) / 20_000)).toFixed(6)}, ${(4 + 3 * Math.sin((2 * Math.PI * i) / 20_000)).toFixed(6)}]`,
    ).join(', ');
    const { lines } = refuse(BASE({ rooms: `              - { name: Office, polygon: [${pts}] }` }));
    expect(lines).toEqual([expect.stringMatching(/:15:\d+ .*rooms\[0\]\.polygon: .*at most 256/)]);
  });

  it('refuses repeated polygons past the scenario’s vertex budget before checking any of them', () => {
    const ring = Array.from(
      { length: 250 },
      (_, i) =>
        `[${(5 + 4 * Math.cos((2 * Math.PI * i) / 250)).toFixed(3)}, ${(5 + 4 * Math.sin((2 * Math.PI * i) / 250)).toFixed(3)}]`,
    ).join(', ');
    const { lines } = refuse(
      BASE({
        rooms: `              - { name: "R\${i}", polygon: [${ring}], repeat: { count: 1000, offset: [10, 0] } }`,
      }),
    );
    expect(lines).toEqual([
      expect.stringMatching(
        /:15:\d+ .*rooms\[0\]\.polygon \(expanded as .*rooms\[\d+\]\.polygon `R\d+`\): polygons total more than 50000 vertices/,
      ),
    ]);
  });

  it('refuses a file over the size limit before reading it', () => {
    const { lines } = refuse(Buffer.alloc(50 * 1024 * 1024, 0x20), 'big.yaml');
    expect(lines).toEqual([
      expect.stringMatching(/big\.yaml:1:1: the file is 52428800 bytes; scenario files are limited to \d+ bytes/),
    ]);
  });

  it('refuses random bytes with a short located message', () => {
    let x = 12345;
    const bytes = Buffer.from(
      Buffer.alloc(2 * 1024 * 1024, 0).map(() => ((x = (x * 1103515245 + 12345) >>> 0), x >>> 24)),
    );
    const { lines } = refuse(bytes, 'random.yaml');
    expect(lines.length).toBeLessThanOrEqual(101);
  });

  it('refuses a YAML alias bomb as a located diagnostic, not an internal error', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    const { lines } = refuse(bomb.join('\n'));
    expect(lines[0]).toMatch(/:\d+:\d+: YAML aliases expand to more than \d+ nodes/);
  });

  it('refuses a start offset beyond ±14:00', () => {
    const { lines } = refuse(BASE({ start: '2026-03-02T08:00+99:00' }));
    expect(lines).toEqual([expect.stringMatching(/:3:8 start: .*offset \+99:00/)]);
  });

  it('refuses a time zone spelled in the wrong case, naming the right one', () => {
    const { lines } = refuse(BASE({ timezone: 'europe/paris' }));
    expect(lines).toEqual([expect.stringMatching(/:8:15 sites\[0\]\.timezone: .*`Europe\/Paris`/)]);
  });

  it('refuses invalid UTF-8 at the line and column of the first bad byte', () => {
    const text = Buffer.from(BASE({ name: 'bad__name' }));
    const at = text.indexOf('bad__name') + 3;
    text[at] = 0xff;
    text[at + 1] = 0xfe;
    const { lines } = refuse(text);
    expect(lines).toEqual([expect.stringMatching(/x\.yaml:2:10: invalid UTF-8/)]);
  });

  it('refuses nesting deeper than the parser’s stack allows, flow or block, at its line', () => {
    expect(refuse(`a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`).lines).toEqual([
      expect.stringMatching(/:1:68: collections nested more than 64 levels deep/),
    ]);
    const block = Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}- `).join('\n');
    expect(refuse(block).lines).toEqual([expect.stringMatching(/:258:1: indented 257 columns deep/)]);
  });

  it('bounds the message of a long unknown name', () => {
    const r = loadScenarioText(BASE({ timezone: 'Z'.repeat(100_000) }), 'long.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok) for (const d of r.diagnostics) expect(formatDiagnostic(d).length).toBeLessThan(600);
  });
});
