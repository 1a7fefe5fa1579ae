import { describe, expect, it } from 'vitest';
import type { ReportData } from '../../src/platform/reads.js';
import { MAX_DOOR_SERIES, MAX_SPACE_SERIES, reportDataset } from '../../src/report/dataset.js';
import { reportHtml } from '../../src/report/html.js';
import type { RunResult } from '../../src/run/report.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { createTruthRecorder } from '../../src/sim/truth.js';

/** A fleet's report page stays bounded: the first spaces and counters are plotted, the rest counted. */
describe('the report dataset of a fleet', () => {
  it('caps the per-minute series and says how many more there are', () => {
    const r = loadScenarioFile(new URL('../../scenarios/fleet.yaml', import.meta.url).pathname, { durationMs: 60_000 });
    if (!r.ok) throw new Error('fleet does not load');
    const model = r.model;
    const data: ReportData = {
      counters: {
        batchesReceived: 0,
        batchesProcessed: 0,
        duplicateBatches: 0,
        packetsProcessed: 0,
        packetsStoredBefore: 0,
        deadLettered: 0,
        eventsEmitted: 0,
        lateInWindow: 0,
        lateBeyondWindow: 0,
      },
      latenciesMs: { values: new Float64Array(), counts: new Float64Array() },
      presence: {},
      traffic: {},
      trafficSpaces: [],
      trafficOccupancy: {},
    };
    const result = {
      scenario: { startLocal: '', sensors: 0, hives: 0, people: 0, fidelity: 'model' },
      presence: { spaces: [], rooms: { mae: 0, exactRate: 1 } },
      traffic: { sensors: [], overall: { recall: 1 } },
      trafficOccupancy: { spaces: [] },
      messages: { lost: 0 },
      latencyMs: { p50: 0, p90: 0, p99: 0, max: 0 },
    } as unknown as RunResult;
    const d = reportDataset(model, createTruthRecorder(model), data, result);
    const spaces = model.floors.length + model.rooms.length + model.zones.length;
    expect(spaces).toBeGreaterThan(MAX_SPACE_SERIES);
    expect(d.spaces).toHaveLength(MAX_SPACE_SERIES);
    expect(d.spacesTotal).toBe(spaces);
    expect(d.doors.length).toBeLessThanOrEqual(MAX_DOOR_SERIES);
    const html = reportHtml(d);
    expect(html).toContain(`${spaces - MAX_SPACE_SERIES} more spaces`);
    expect(html.match(/class="space-plot"/g)).toHaveLength(MAX_SPACE_SERIES);
  });

  it('shows the thresholds with their measured values and verdicts, escaped', () => {
    const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname, {
      durationMs: 60_000,
    });
    if (!r.ok) throw new Error('quickstart does not load');
    const data: ReportData = {
      counters: {
        batchesReceived: 0,
        batchesProcessed: 0,
        duplicateBatches: 0,
        packetsProcessed: 0,
        packetsStoredBefore: 0,
        deadLettered: 0,
        eventsEmitted: 0,
        lateInWindow: 0,
        lateBeyondWindow: 0,
      },
      latenciesMs: { values: new Float64Array([5]), counts: new Float64Array([3]) },
      presence: {},
      traffic: {},
      trafficSpaces: [],
      trafficOccupancy: {},
    };
    const result = {
      scenario: { startLocal: '', sensors: 0, hives: 0, people: 0, fidelity: 'model' },
      presence: { spaces: [], rooms: { mae: 0.7, exactRate: 1 } },
      traffic: { sensors: [], overall: { recall: 1 } },
      trafficOccupancy: { spaces: [] },
      messages: { lost: 0 },
      latencyMs: { p50: 0, p90: 0, p99: 0, max: 0 },
    } as unknown as RunResult;
    const verdicts = [
      {
        expectation: { text: 'rooms.mae<0.5', metric: 'rooms.mae' as const, op: '<' as const, value: 0.5 },
        measured: 0.7,
        passed: false,
      },
      {
        expectation: { text: 'messages.lost==0', metric: 'messages.lost' as const, op: '==' as const, value: 0 },
        measured: 0,
        passed: true,
      },
    ];
    const d = reportDataset(r.model, createTruthRecorder(r.model), data, result, verdicts);
    expect(d.latency.counts.reduce((a, b) => a + b, 0)).toBe(3);
    const html = reportHtml(d);
    const section = html.slice(html.indexOf('<h2 id="thresholds">'), html.indexOf('<script'));
    expect(section).toContain('<b>1 failed</b>');
    expect(section).toContain('<td>rooms.mae&lt;0.5</td>');
    expect(section).toMatch(/<td>rooms\.mae&lt;0\.5<\/td><td>[^<]*0\.7[^<]*<\/td><td>FAIL<\/td>/);
    expect(section).toMatch(/<td>messages\.lost==0<\/td><td>0<\/td><td>pass<\/td>/);
    expect(reportHtml(reportDataset(r.model, createTruthRecorder(r.model), data, result))).toContain(
      'No thresholds in this run',
    );
  });
});
