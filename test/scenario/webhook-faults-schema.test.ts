import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { FAULT_BOUNDS, parseWebhookFaults } from '../../src/webhooks/faults.js';

/** `webhooks[].faults`: read into the model with defaults, refused at file:line:col with the field. */
const SCENARIO = (faults: string): string => `version: 1
name: hooks
start: "2026-03-02T08:00"
duration: 2m
organization: { name: Acme }
webhook_allow: [127.0.0.1/8]
webhooks:
  - url: http://127.0.0.1:9/hook
    event_types: [ROOM_OCCUPANCY_1M]
    faults: ${faults}
sites:
  - name: HQ
    timezone: Europe/Paris
    buildings:
      - name: Main
        floors:
          - name: Ground
            level: 0
            rooms:
              - { name: Office, polygon: [[0, 0], [14, 0], [14, 8], [0, 8]] }
            hives:
              - { name: H, position: [8, 4] }
            sensors:
              - { name: S1, mode: presence, room: Office, center: [8, 4] }
`;

describe('scenario webhooks[].faults', () => {
  it('reads rates and parameters into the model, defaults where a kind is a bare rate', () => {
    const r = loadScenarioText(
      SCENARIO(
        '{ duplicate: 0.05, reorder: 0.1, delay: { rate: 0.2, min_ms: 10, max_ms: 20 }, burst: { rate: 0.01, size: 4 }, revise: 1, timeout: 0 }',
      ),
      'hooks.yaml',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.model.webhooks?.[0]?.faults).toEqual({
      duplicate: { rate: 0.05 },
      reorder: { rate: 0.1, window: FAULT_BOUNDS.window.fallback },
      delay: { rate: 0.2, minMs: 10, maxMs: 20 },
      burst: { rate: 0.01, size: 4, holdMs: FAULT_BOUNDS.holdMs.fallback },
      revise: { rate: 1 },
      timeout: { rate: 0 },
    });
  });

  it('gives the same faults as the same spec on the command line (one set of defaults)', () => {
    const r = loadScenarioText(
      SCENARIO('{ duplicate: 0.05, reorder: 0.1, delay: 0.2, burst: 0.3, revise: 0.4, timeout: 0.5 }'),
      'hooks.yaml',
    );
    const cli = parseWebhookFaults('duplicate=0.05,reorder=0.1,delay=0.2,burst=0.3,revise=0.4,timeout=0.5');
    expect(r.ok && cli.ok).toBe(true);
    if (!r.ok || !cli.ok) return;
    expect(r.model.webhooks?.[0]?.faults).toEqual(cli.faults);
  });

  it('refuses an unknown kind, a rate above 1 and a window out of bounds at file:line:col with the field', () => {
    const r = loadScenarioText(
      SCENARIO('{ dupe: 0.1, revise: 1.5, reorder: { rate: 0.1, window: 999 } }'),
      'hooks.yaml',
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const lines = r.diagnostics.map(formatDiagnostic);
    expect(
      lines.some((l) => /^hooks\.yaml:10:\d+ .*webhooks\[0\]\.faults.*dupe/.test(l)),
      lines.join('\n'),
    ).toBe(true);
    expect(
      lines.some((l) => /^hooks\.yaml:10:\d+ webhooks\[0\]\.faults\.revise/.test(l)),
      lines.join('\n'),
    ).toBe(true);
    expect(
      lines.some((l) => /^hooks\.yaml:10:\d+ webhooks\[0\]\.faults\.reorder\.window/.test(l)),
      lines.join('\n'),
    ).toBe(true);
  });

  it('takes the bounds of --webhook-faults (webhooks/faults.ts FAULT_BOUNDS): the last value in, the next one out', () => {
    const b = FAULT_BOUNDS;
    const cases: Array<[string, string, string, string]> = [
      [
        `{ reorder: { rate: 1, window: ${b.window.max} } }`,
        `reorder=1/${b.window.max}`,
        `{ reorder: { rate: 1, window: ${b.window.max + 1} } }`,
        `reorder=1/${b.window.max + 1}`,
      ],
      [
        `{ reorder: { rate: 1, window: ${b.window.min} } }`,
        `reorder=1/${b.window.min}`,
        `{ reorder: { rate: 1, window: ${b.window.min - 1} } }`,
        `reorder=1/${b.window.min - 1}`,
      ],
      [
        `{ delay: { rate: 1, min_ms: ${b.delayMs.min}, max_ms: ${b.delayMs.max} } }`,
        `delay=1/${b.delayMs.min}-${b.delayMs.max}`,
        `{ delay: { rate: 1, max_ms: ${b.delayMs.max + 1} } }`,
        `delay=1/0-${b.delayMs.max + 1}`,
      ],
      [
        `{ burst: { rate: 1, size: ${b.size.max}, hold_ms: ${b.holdMs.max} } }`,
        `burst=1/${b.size.max}/${b.holdMs.max}`,
        `{ burst: { rate: 1, size: ${b.size.max + 1} } }`,
        `burst=1/${b.size.max + 1}`,
      ],
      [
        `{ burst: { rate: 1, size: ${b.size.min}, hold_ms: ${b.holdMs.min} } }`,
        `burst=1/${b.size.min}/${b.holdMs.min}`,
        `{ burst: { rate: 1, hold_ms: ${b.holdMs.min - 1} } }`,
        `burst=1/8/${b.holdMs.min - 1}`,
      ],
    ];
    for (const [fileIn, cliIn, fileOut, cliOut] of cases) {
      expect(loadScenarioText(SCENARIO(fileIn), 'hooks.yaml').ok, fileIn).toBe(true);
      expect(parseWebhookFaults(cliIn).ok, cliIn).toBe(true);
      expect(loadScenarioText(SCENARIO(fileOut), 'hooks.yaml').ok, fileOut).toBe(false);
      expect(parseWebhookFaults(cliOut).ok, cliOut).toBe(false);
    }
  });

  it('refuses a delay whose least wait is above its longest', () => {
    const r = loadScenarioText(SCENARIO('{ delay: { rate: 0.1, min_ms: 500, max_ms: 50 } }'), 'hooks.yaml');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.diagnostics.map(formatDiagnostic).join('\n')).toMatch(
      /hooks\.yaml:10:\d+ webhooks\[0\]\.faults\.delay.*min_ms must not be above max_ms/,
    );
  });
});
