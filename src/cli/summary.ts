import type { RunReport } from '../run/run-scenario.js';
import type { StartupBreakdown } from '../run/run-report.js';
import { formatRealTime } from '../run/lag.js';
import { formatDelivery } from './delivery-summary.js';
import { formatKeepUp } from '../run/webhook-keep-up.js';
import { SIMULATED_TIMESTAMPS_WARNING } from '../webhooks/timestamps.js';

/** Beyond this many rows a table is summarised: totals and the worst ten (the full tables are in --report and --html). */
export const FULL_TABLE_MAX = 30;
export const WORST_SHOWN = 10;

/**
 * The rows a summary table shows: all of them up to FULL_TABLE_MAX, else the WORST_SHOWN
 * with the largest error (ties in table order), kept in table order.
 */
export function rowsToShow<T>(rows: readonly T[], error: (row: T) => number): { shown: T[]; omitted: number } {
  if (rows.length <= FULL_TABLE_MAX) return { shown: [...rows], omitted: 0 };
  const worst = new Set(
    rows
      .map((r, i) => ({ r, i, e: error(r) }))
      .sort((a, b) => b.e - a.e || a.i - b.i)
      .slice(0, WORST_SHOWN)
      .map((x) => x.r),
  );
  return { shown: rows.filter((r) => worst.has(r)), omitted: rows.length - worst.size };
}

function omittedLine(omitted: number, what: string, by: string): string[] {
  return omitted > 0
    ? [
        `  … the ${WORST_SHOWN} worst by ${by} shown; ${omitted} more ${what} in the full table (--report FILE, --html FILE)`,
      ]
    : [];
}

/** The human summary of a run, printed on stdout. */
export function formatSummary(report: RunReport): string {
  const r = report.result;
  const lines: string[] = [];
  lines.push(`occusim run: ${r.scenario.name} (seed ${r.scenario.seed}, ${r.scenario.fidelity} fidelity)`);
  lines.push(
    `  simulated ${(r.scenario.durationMs / 3_600_000).toFixed(2)} h from ${r.scenario.startLocal}: ${r.scenario.people} people, ` +
      `${r.scenario.sensors} sensors, ${r.scenario.hives} hive(s)`,
  );
  lines.push('');
  lines.push('Presence occupancy, measured vs true, per minute');
  lines.push(
    `  ${'space'.padEnd(28)}${'kind'.padEnd(7)}${'minutes'.padStart(8)}${'MAE'.padStart(8)}${'exact'.padStart(8)}${'±1'.padStart(8)}${'mean true'.padStart(11)}${'mean meas'.padStart(11)}`,
  );
  const multiFloor = new Set(r.presence.spaces.map((s) => s.floor)).size > 1;
  const spaces = rowsToShow(r.presence.spaces, (s) => s.mae);
  if (spaces.omitted > 0)
    lines.push(
      `  ${r.presence.spaces.length} spaces: ${r.presence.spaces.filter((s) => s.kind === 'floor').length} floors, ${r.presence.spaces.filter((s) => s.kind === 'room').length} rooms, ${r.presence.spaces.filter((s) => s.kind === 'zone').length} zones; the worst by MAE:`,
    );
  for (const s of spaces.shown) {
    const label = s.kind === 'floor' ? s.name : multiFloor ? `${s.floor} › ${s.name}` : `  ${s.name}`;
    lines.push(
      `  ${label.slice(0, 27).padEnd(28)}${s.kind.padEnd(7)}${String(s.minutes).padStart(8)}${s.mae.toFixed(2).padStart(8)}` +
        `${pct(s.exactRate).padStart(8)}${pct(s.withinOneRate).padStart(8)}${s.meanTrue.toFixed(2).padStart(11)}${s.meanMeasured.toFixed(2).padStart(11)}`,
    );
  }
  lines.push(...omittedLine(spaces.omitted, 'spaces', 'MAE'));
  const rooms = r.presence.rooms;
  const verdict = rooms.mae <= 1 ? 'within 1 person of truth on average' : 'MORE than 1 person from truth on average';
  lines.push(
    `  rooms overall: MAE ${rooms.mae.toFixed(2)} people per room-minute over ${rooms.minutes} room-minutes — ${verdict}`,
  );
  lines.push('');
  lines.push('Traffic, counted vs true door crossings');
  // Error of a counter: crossings it missed or added, in and out.
  const sensors = rowsToShow(
    r.traffic.sensors,
    (t) => Math.abs(t.measured.in - t.truth.in) + Math.abs(t.measured.out - t.truth.out),
  );
  const o = r.traffic.overall;
  if (sensors.omitted > 0)
    lines.push(
      `  ${r.traffic.sensors.length} traffic sensors: ${o.counted} of ${o.trueCrossings} true crossings counted (recall ${pct(o.recall)}); the worst by miscounts:`,
    );
  for (const t of sensors.shown) {
    const label = multiFloor ? `${t.floor} › ${t.name}` : t.name;
    lines.push(
      `  ${label.slice(0, 27).padEnd(28)}door ${t.door.slice(0, 20).padEnd(21)} in ${t.measured.in}/${t.truth.in}  out ${t.measured.out}/${t.truth.out}` +
        `  recall in ${pct(t.recall.in)} out ${pct(t.recall.out)}`,
    );
  }
  lines.push(...omittedLine(sensors.omitted, 'traffic sensors', 'miscounts'));
  const to = r.trafficOccupancy;
  if (to.spaces.length > 0) {
    const resets = Math.max(...to.spaces.map((s) => s.resets));
    lines.push(
      `  traffic occupancy (${to.spaces.length} spaces, ${resets} daily reset(s)): MAE raw ${mean(to.spaces.map((s) => s.maeRaw))}, ` +
        `calibrated ${mean(to.spaces.map((s) => s.maeCalibrated))}; end-of-day drift ` +
        (to.endOfDayDriftReduction === null
          ? 'none in raw'
          : `reduced ${pct(to.endOfDayDriftReduction)} by calibration`),
    );
  }
  lines.push(
    `Pipeline: ${r.pipeline.eventsEmitted} occupancy events; late packets ${r.pipeline.lateInWindow} within the 5-min window, ${r.pipeline.lateBeyondWindow} beyond it (stored)`,
  );
  const d = r.detector;
  if (d) {
    const p = d.presence.overall;
    const t = d.traffic.overall;
    lines.push(
      `Detector vs truth (${r.scenario.fidelity}): presence exact ${pct(p.exactRate)}, MAE ${p.mae.toFixed(3)}, localisation ${p.locErrorM.toFixed(2)} m over ${p.samples} reports; ` +
        `traffic precision ${pct(t.precision)} recall ${pct(t.recall)} (${t.counted} counted / ${t.trueCrossings} true)`,
    );
  }
  lines.push('');
  const m = r.messages;
  lines.push(
    `Messages: ${m.packetsSent} packets in ${m.batchesSent} batches sent; ${m.packetsDelivered} delivered, ` +
      `${m.duplicateBatches} duplicate batches, ${m.deadLettered} dead-lettered, ${m.lost} lost`,
  );
  lines.push(
    `Latency (sim time, sensing → stored): p50 ${ms(r.latencyMs.p50)}, p99 ${ms(r.latencyMs.p99)}, max ${ms(r.latencyMs.max)}`,
  );
  if (r.delivery) lines.push(...formatDelivery(r.delivery));
  const p = report.perf;
  if (r.webhooks) {
    const lat = p.webhookLatencyMs
      ? ` — enqueue → 2xx p50 ${p.webhookLatencyMs.p50} ms, p99 ${p.webhookLatencyMs.p99} ms (wall)`
      : '';
    lines.push(`Webhooks${lat}`);
    const hooks = rowsToShow(r.webhooks, (w) => w.deadLettered * 1e6 + w.retried + w.pending);
    for (const w of hooks.shown) {
      const attempts = w.delivered + w.retried + w.deadLettered;
      const errors = attempts === 0 ? '' : `, errors ${(((w.retried + w.deadLettered) / attempts) * 100).toFixed(1)}%`;
      // Wall figures of this endpoint (perf.webhooks): its own latency and throughput.
      const e = p.webhooks?.find((x) => x.id === w.id);
      const own = e
        ? `; enqueue → 2xx p50 ${e.latencyMs.p50} ms, p99 ${e.latencyMs.p99} ms, ${e.deliveredPerWallS}/wall-s`
        : '';
      lines.push(
        `  ${w.name.slice(0, 27).padEnd(28)}delivered ${w.delivered}, retried ${w.retried}, dead-lettered ${w.deadLettered}, disabled ${w.disabled}×, pending ${w.pending}${errors}${own}`,
      );
      if (w.storm)
        lines.push(
          `  ${''.padEnd(28)}storm: ${w.storm.rate}/sim-s, ${w.storm.generated} events enqueued, ${w.storm.delivered} delivered (of the delivered above)`,
        );
      // Faults on purpose (docs/load-testing.md): how many attempts each kind hit.
      if (w.faults)
        lines.push(
          `  ${''.padEnd(28)}faults applied: ${Object.entries(w.faults)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
        );
    }
    lines.push(...omittedLine(hooks.omitted, 'subscriptions', 'dead letters and retries'));
    // Left by lanes still behind at the end (webhooks/engine.ts settle): durable, not lost.
    const pending = r.webhooks.reduce((a, w) => a + w.pending, 0);
    if (pending > 0)
      lines.push(
        `  ${pending.toLocaleString('en-US')} deliveries pending, kept in the store's outbox: occusim run --resume or occusim serve on it delivers them${report.dbKept ? '' : ' (this store is temporary: --keep keeps it)'}`,
      );
    if (p.webhookKeepUp) lines.push(formatKeepUp(p.webhookKeepUp));
    if (p.webhookTimestamps === 'simulated') lines.push(`  ${SIMULATED_TIMESTAMPS_WARNING}`);
  }
  lines.push(
    `Wall time ${(p.wallMs / 1000).toFixed(1)} s (×${p.speedup} real time, ${p.sensorSecondsPerWallSecond.toLocaleString('en-US')} sensor-s/s), CPU ${p.cpuPercent} % (platform ${p.platformThread ? 'in its own thread' : "in the run's thread"}), peak RSS ${p.peakRssMb} MB; store: ${report.dbKept ? report.db : 'temporary, deleted at exit (--keep keeps it)'}`,
  );
  if (p.startup) lines.push(formatStartup(p.startupMs, p.startupCpuMs, p.startup));
  const realTime = formatRealTime(p.realTime);
  if (realTime !== null) lines.push(realTime);
  return lines.join('\n');
}

/** Where the start-up went, as the run's thread waited for it; CPU counts every thread (200 % = both of 2 cores). */
function formatStartup(wallMs: number, cpuMs: number, s: StartupBreakdown): string {
  const sec = (x: number): string => `${(x / 1000).toFixed(1)} s`;
  const cpu = (x: { wallMs: number; cpuMs: number }): string =>
    `${Math.round((x.cpuMs * 100) / Math.max(1, x.wallMs))} %`;
  // The steps of the run's start-up as it lists them (run/run-start.ts); those under 50 ms are left out.
  const steps = s.steps
    .filter((x) => x.wallMs >= 50)
    .map((x) => `${x.name} ${sec(x.wallMs)}${x.cpuMs > x.wallMs * 1.2 ? ` (CPU ${cpu(x)})` : ''}`);
  return (
    `Start-up ${sec(wallMs)} (CPU ${cpu({ wallMs, cpuMs })}): load ${sec(s.load.wallMs)}` +
    `${steps.length > 0 ? `, ${steps.join(', ')}` : ''}; platform ready at ${sec(s.platformUpMs)} from the start`
  );
}

function mean(xs: readonly number[]): string {
  return (xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length)).toFixed(2);
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${x} ms`;
}
