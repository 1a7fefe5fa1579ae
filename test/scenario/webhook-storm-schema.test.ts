import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { MAX_STORM_RATE } from '../../src/scenario/webhook-storm-schema.js';
import { parseWebhookStorm, STORM_BOUNDS } from '../../src/webhooks/storm.js';

/** `webhooks[].storm`: read into the model, refused at file:line:col with the field. */
const SCENARIO = (storm: string): string => `version: 1
name: hooks
start: "2026-03-02T08:00"
duration: 2m
organization: { name: Acme }
webhook_allow: [127.0.0.1/8]
webhooks:
  - url: http://127.0.0.1:9/hook
    event_types: [ROOM_OCCUPANCY_1M, DETECTIONS]
    storm: ${storm}
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

function diagnostics(storm: string): string[] {
  const r = loadScenarioText(SCENARIO(storm), 'hooks.yaml');
  return r.ok ? [] : r.diagnostics.map(formatDiagnostic);
}

describe('scenario webhooks[].storm', () => {
  it('reads the rate and the types (canonical) into the model, as --webhook-storm gives them', () => {
    const r = loadScenarioText(SCENARIO('{ rate: 5000, types: [room_occupancy_1min, DETECTIONS] }'), 'hooks.yaml');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.model.webhooks?.[0]?.storm).toEqual({ rate: 5000, types: ['ROOM_OCCUPANCY_1M', 'DETECTIONS'] });
    const cli = parseWebhookStorm('5000/ROOM_OCCUPANCY_1M+DETECTIONS');
    expect(cli.ok && cli.storm).toEqual(r.model.webhooks?.[0]?.storm);
    const all = loadScenarioText(SCENARIO('{ rate: 1 }'), 'hooks.yaml');
    expect(all.ok && all.model.webhooks?.[0]?.storm).toEqual({ rate: 1 });
  });

  it('refuses a rate above the bound, a fraction, an unknown field and a type not the subscription’s, at file:line:col', () => {
    expect(
      diagnostics(`{ rate: ${MAX_STORM_RATE + 1} }`).some((l) =>
        /^hooks\.yaml:10:\d+ webhooks\[0\]\.storm\.rate/.test(l),
      ),
    ).toBe(true);
    expect(diagnostics('{ rate: 2.5 }').some((l) => /^hooks\.yaml:10:\d+ webhooks\[0\]\.storm\.rate/.test(l))).toBe(
      true,
    );
    expect(
      diagnostics('{ rate: 5, burst: 1 }').some((l) => /^hooks\.yaml:10:\d+ .*webhooks\[0\]\.storm.*burst/.test(l)),
    ).toBe(true);
    const lines = diagnostics('{ rate: 5, types: [DETECTIONS, TRAFFIC] }');
    expect(
      lines.some((l) =>
        /^hooks\.yaml:10:\d+ webhooks\[0\]\.storm\.types\[1\].*TRAFFIC is not among the subscription's event_types/.test(
          l,
        ),
      ),
      lines.join('\n'),
    ).toBe(true);
  });

  it('has the bound of --webhook-storm (webhooks/storm.ts STORM_BOUNDS): the last value in, the next one out', () => {
    expect(MAX_STORM_RATE).toBe(STORM_BOUNDS.rate.max);
    expect(diagnostics(`{ rate: ${STORM_BOUNDS.rate.max} }`)).toEqual([]);
    expect(parseWebhookStorm(String(STORM_BOUNDS.rate.max)).ok).toBe(true);
    expect(parseWebhookStorm(String(STORM_BOUNDS.rate.max + 1)).ok).toBe(false);
    expect(diagnostics('{ rate: 0 }').length).toBeGreaterThan(0);
    expect(parseWebhookStorm('0').ok).toBe(false);
  });
});
