import { describe, expect, it } from 'vitest';
import { FULL_TABLE_MAX, formatSummary, rowsToShow, WORST_SHOWN } from '../../src/cli/summary.js';
import type { RunReport } from '../../src/run/run-scenario.js';
import type { SpaceAccuracy, TrafficAccuracy } from '../../src/run/report.js';

/** A report of `spaces` rooms and `sensors` door counters, with errors growing with the index. */
function report(spaces: number, sensors: number): RunReport {
  const space = (i: number): SpaceAccuracy => ({
    id: `r${i}`,
    name: `Room ${i}`,
    floor: 'F',
    kind: 'room',
    minutes: 60,
    missingMinutes: 0,
    mae: (i % 97) / 100,
    exactRate: 0.9,
    withinOneRate: 1,
    meanTrue: 2,
    meanMeasured: 2,
  });
  const counter = (i: number): TrafficAccuracy => ({
    id: `t${i}`,
    name: `Counter ${i}`,
    floor: 'F',
    door: `Door ${i}`,
    measured: { in: 100 - (i % 13), out: 100 },
    truth: { in: 100, out: 100 },
    recall: { in: 1, out: 1 },
  });
  return {
    scenario: 'big',
    seed: 1,
    db: '/tmp/x.sqlite',
    dbKept: false,
    result: {
      scenario: {
        name: 'big',
        seed: 1,
        fidelity: 'model',
        start: '2026-01-01T00:00:00.000Z',
        startLocal: '2026-01-01T01:00:00+01:00',
        durationMs: 3_600_000,
        sensors: spaces + sensors,
        hives: 3,
        people: 50,
      },
      presence: {
        spaces: Array.from({ length: spaces }, (_, i) => space(i)),
        rooms: { minutes: spaces * 60, mae: 0.4, exactRate: 0.9, withinOneRate: 1 },
      },
      traffic: {
        sensors: Array.from({ length: sensors }, (_, i) => counter(i)),
        overall: { trueCrossings: 200 * sensors, counted: 190 * sensors, recall: 0.95 },
      },
      trafficOccupancy: { spaces: [], endOfDayDriftReduction: null },
      pipeline: { eventsEmitted: 1, lateInWindow: 0, lateBeyondWindow: 0 },
      messages: {
        packetsSent: 10,
        batchesSent: 1,
        batchesProcessed: 1,
        duplicateBatches: 0,
        packetsDelivered: 10,
        deadLettered: 0,
        lost: 0,
      },
      latencyMs: { p50: 1, p90: 1, p99: 1, max: 1 },
    },
    perf: {
      wallMs: 1000,
      loadMs: 10,
      simulatedMs: 3_600_000,
      speedup: 3600,
      ticks: 3600,
      sensorSecondsPerWallSecond: 1,
      packetsPerWallSecond: 10,
      peakRssMb: 100,
      cpuPercent: 100,
      platformThread: false,
      hiveThreads: 0,
      interrupted: false,
      startupMs: 10,
      loopMs: 990,
      startupCpuMs: 10,
      loopCpuMs: 990,
    },
  } as RunReport;
}

describe('summaries that scale', () => {
  it('print every row of a small run', () => {
    const text = formatSummary(report(FULL_TABLE_MAX, 3));
    for (let i = 0; i < FULL_TABLE_MAX; i++) expect(text).toContain(`Room ${i}\n`.replace('\n', ' ').trimEnd());
    expect(text).not.toContain('worst by');
  });

  it('print totals and the ten worst rows when a run has more than 30 spaces or sensors, in bounded length', () => {
    const small = formatSummary(report(5, 5)).split('\n').length;
    const text = formatSummary(report(2000, 500));
    const lines = text.split('\n');
    expect(lines.length).toBeLessThan(small + 2 * WORST_SHOWN + 10);
    expect(text).toContain('2000 spaces: 0 floors, 2000 rooms, 0 zones; the worst by MAE:');
    expect(text).toMatch(/1990 more spaces in the full table \(--report FILE, --html FILE\)/);
    expect(text).toContain('500 traffic sensors: 95000 of 100000 true crossings counted');
    // The worst rooms by MAE are those with i % 97 = 96: Room 96, 193, …
    expect(text).toContain('Room 96 ');
    expect(text).not.toMatch(/Room 0 /);
    expect(text).toContain('Counter 12 ');
  });

  it('pick the worst rows by error, ties in table order, and keep table order', () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({ i, e: i % 4 }));
    const { shown, omitted } = rowsToShow(rows, (r) => r.e);
    expect(omitted).toBe(30);
    expect(shown.map((r) => r.i)).toEqual([3, 7, 11, 15, 19, 23, 27, 31, 35, 39]);
  });

  it('give each webhook endpoint its latency, throughput and storm counts', () => {
    const r = report(1, 1);
    r.result.webhooks = [
      {
        id: 'webhook_1',
        name: 'stormy',
        delivered: 1_000,
        retried: 10,
        deadLettered: 0,
        disabled: 0,
        pending: 0,
        storm: { rate: 500, generated: 900, delivered: 900 },
      },
      { id: 'webhook_2', name: 'quiet', delivered: 5, retried: 0, deadLettered: 0, disabled: 0, pending: 0 },
    ];
    r.perf.webhookLatencyMs = { p50: 3, p99: 40 };
    r.perf.webhooks = [
      {
        id: 'webhook_1',
        name: 'stormy',
        delivered: 1_000,
        errorRate: 10 / 1010,
        latencyMs: { p50: 3, p99: 41 },
        deliveredPerWallS: 9_108,
      },
      {
        id: 'webhook_2',
        name: 'quiet',
        delivered: 5,
        errorRate: 0,
        latencyMs: { p50: 1.5, p99: 2 },
        deliveredPerWallS: 12,
      },
    ];
    const text = formatSummary(r);
    expect(text).toContain('errors 1.0%; enqueue → 2xx p50 3 ms, p99 41 ms, 9108/wall-s');
    expect(text).toContain('storm: 500/sim-s, 900 events enqueued, 900 delivered (of the delivered above)');
    expect(text).toMatch(/quiet .*; enqueue → 2xx p50 1\.5 ms, p99 2 ms, 12\/wall-s/);
    expect(text.match(/storm:/g)).toHaveLength(1);
  });
});
