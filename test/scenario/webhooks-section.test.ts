import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { isAppError } from '../../src/core/errors.js';

/** The scenario's `webhooks:` section: its shape located in the file, its meaning at platform start. */
const SCENARIO = (hooks: string): string => `version: 1
name: hooks
start: "2026-03-02T08:00"
duration: 2m
organization: { name: Acme }
${hooks}
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

describe('scenario webhooks: section', () => {
  it('reads entries with defaults into the model', () => {
    const r = loadScenarioText(
      SCENARIO(`webhook_allow: [127.0.0.1/8]
webhooks:
  - url: http://127.0.0.1:9/hook
    event_types: [room_occupancy_1min, DETECTIONS]
    filters: { room_ids: [room_x] }`),
      'hooks.yaml',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.model.webhookAllow).toEqual(['127.0.0.1/8']);
    expect(r.model.webhooks).toEqual([
      {
        name: 'webhook-1',
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['room_occupancy_1min', 'DETECTIONS'],
        filters: { room_ids: ['room_x'] },
        secret: null,
        sendOnValueChange: false,
        httpTimeoutS: null,
        src: expect.any(String) as string,
      },
    ]);
  });

  it('locates a bad event type, filter key or secret at file:line:col', () => {
    const r = loadScenarioText(
      SCENARIO(`webhooks:
  - url: http://127.0.0.1:9/hook
    event_types: [ROOM]
    filters: { hive_ids: [h] }
    secret: plain`),
      'hooks.yaml',
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const lines = r.diagnostics.map(formatDiagnostic).join('\n');
    expect(lines.split('\n')).toEqual([
      'hooks.yaml:8:19 webhooks[0].event_types[0]: an event type of spec §6: DETECTIONS, TRAFFIC, FLOOR_OCCUPANCY, ROOM_OCCUPANCY, ZONE_OCCUPANCY, FLOOR_OCCUPANCY_1M, ROOM_OCCUPANCY_1M, ZONE_OCCUPANCY_1M (_1MIN is accepted for _1M), got "ROOM"',
      'hooks.yaml:9:16 webhooks[0].filters.hive_ids: unknown field `hive_ids`',
      'hooks.yaml:10:13 webhooks[0].secret: whsec_ followed by base64, got "plain"',
    ]);
  });

  it('reads a per-endpoint concurrency limit, and locates one that is not an integer in 1..64', () => {
    const ok = loadScenarioText(
      SCENARIO(`webhooks:\n  - { url: "http://127.0.0.1:9/hook", event_types: [TRAFFIC], concurrency: 4 }`),
      'hooks.yaml',
    );
    expect(ok.ok && ok.model.webhooks?.[0]?.concurrency).toBe(4);
    const absent = loadScenarioText(
      SCENARIO(`webhooks:\n  - { url: "http://127.0.0.1:9/hook", event_types: [TRAFFIC] }`),
      'hooks.yaml',
    );
    expect(absent.ok && absent.model.webhooks?.[0]).not.toHaveProperty('concurrency');
    const bad = loadScenarioText(
      SCENARIO(`webhooks:
  - { url: "http://127.0.0.1:9/a", event_types: [TRAFFIC], concurrency: 0 }
  - { url: "http://127.0.0.1:9/b", event_types: [TRAFFIC], concurrency: 65 }
  - { url: "http://127.0.0.1:9/c", event_types: [TRAFFIC], concurrency: 2.5 }`),
      'hooks.yaml',
    );
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    const lines = bad.diagnostics.map(formatDiagnostic);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^hooks\.yaml:7:\d+ webhooks\[0\]\.concurrency: .*1/);
    expect(lines[1]).toMatch(/^hooks\.yaml:8:\d+ webhooks\[1\]\.concurrency: .*64/);
    expect(lines[2]).toMatch(/^hooks\.yaml:9:\d+ webhooks\[2\]\.concurrency: .*integer/);
  });

  it('refuses a declared webhook to a metadata address when the platform starts, naming the entry', async () => {
    const r = loadScenarioText(
      SCENARIO(`webhooks:
  - url: http://169.254.169.254/latest/meta-data/
    event_types: [TRAFFIC]`),
      'hooks.yaml',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    let err: unknown;
    try {
      await runScenario(r.model, { platformThread: false });
    } catch (e) {
      err = e;
    }
    expect(isAppError(err, 'SCENARIO_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(
      /hooks\.yaml webhooks\[0\]\.endpoint_config\.url: 169\.254\.169\.254 is refused: .*\(WEBHOOK_FORBIDDEN_ADDRESS\)$/,
    );
  });
});
