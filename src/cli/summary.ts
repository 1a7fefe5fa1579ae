import type { RunReport } from '../run/run-scenario.js';
import { formatRealTime } from '../run/lag.js';
import { formatDelivery } from './delivery-summary.js';

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
  lines.push(`  ${'space'.padEnd(28)}${'kind'.padEnd(7)}${'minutes'.padStart(8)}${'MAE'.padStart(8)}${'exact'.padStart(8)}${'±1'.padStart(8)}${'mean true'.padStart(11)}${'mean meas'.padStart(11)}`);
  const multiFloor = new Set(r.presence.spaces.map((s) => s.floor)).size > 1;
  for (const s of r.presence.spaces) {
    const label = s.kind === 'floor' ? s.name : multiFloor ? `${s.floor} › ${s.name}` : `  ${s.name}`;
    lines.push(
      `  ${label.slice(0, 27).padEnd(28)}${s.kind.padEnd(7)}${String(s.minutes).padStart(8)}${s.mae.toFixed(2).padStart(8)}` +
        `${pct(s.exactRate).padStart(8)}${pct(s.withinOneRate).padStart(8)}${s.meanTrue.toFixed(2).padStart(11)}${s.meanMeasured.toFixed(2).padStart(11)}`,
    );
  }
  const rooms = r.presence.rooms;
  const verdict = rooms.mae <= 1 ? 'within 1 person of truth on average' : 'MORE than 1 person from truth on average';
  lines.push(`  rooms overall: MAE ${rooms.mae.toFixed(2)} people per room-minute over ${rooms.minutes} room-minutes — ${verdict}`);
  lines.push('');
  lines.push('Traffic, counted vs true door crossings');
  for (const t of r.traffic.sensors) {
    const label = multiFloor ? `${t.floor} › ${t.name}` : t.name;
    lines.push(
      `  ${label.slice(0, 27).padEnd(28)}door ${t.door.slice(0, 20).padEnd(21)} in ${t.measured.in}/${t.truth.in}  out ${t.measured.out}/${t.truth.out}` +
        `  recall in ${pct(t.recall.in)} out ${pct(t.recall.out)}`,
    );
  }
  const to = r.trafficOccupancy;
  if (to.spaces.length > 0) {
    const resets = Math.max(...to.spaces.map((s) => s.resets));
    lines.push(
      `  traffic occupancy (${to.spaces.length} spaces, ${resets} daily reset(s)): MAE raw ${mean(to.spaces.map((s) => s.maeRaw))}, ` +
        `calibrated ${mean(to.spaces.map((s) => s.maeCalibrated))}; end-of-day drift ` +
        (to.endOfDayDriftReduction === null ? 'none in raw' : `reduced ${pct(to.endOfDayDriftReduction)} by calibration`),
    );
  }
  lines.push(`Pipeline: ${r.pipeline.eventsEmitted} occupancy events; late packets ${r.pipeline.lateInWindow} within the 5-min window, ${r.pipeline.lateBeyondWindow} beyond it (stored)`);
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
  lines.push(`Latency (sim time, sensing → stored): p50 ${ms(r.latencyMs.p50)}, p99 ${ms(r.latencyMs.p99)}, max ${ms(r.latencyMs.max)}`);
  if (r.delivery) lines.push(...formatDelivery(r.delivery));
  const p = report.perf;
  if (r.webhooks) {
    const lat = p.webhookLatencyMs ? ` — enqueue → 2xx p50 ${p.webhookLatencyMs.p50} ms, p99 ${p.webhookLatencyMs.p99} ms (wall)` : '';
    lines.push(`Webhooks${lat}`);
    for (const w of r.webhooks) lines.push(`  ${w.name.slice(0, 27).padEnd(28)}delivered ${w.delivered}, retried ${w.retried}, dead-lettered ${w.deadLettered}, disabled ${w.disabled}×, pending ${w.pending}`);
  }
  lines.push(
    `Wall time ${(p.wallMs / 1000).toFixed(1)} s (×${p.speedup} real time, ${p.sensorSecondsPerWallSecond.toLocaleString('en-US')} sensor-s/s), CPU ${p.cpuPercent} % (platform ${p.platformThread ? 'in its own thread' : 'in the run\'s thread'}), peak RSS ${p.peakRssMb} MB; store: ${report.dbKept ? report.db : 'temporary, deleted at exit (--keep keeps it)'}`,
  );
  const realTime = formatRealTime(p.realTime);
  if (realTime !== null) lines.push(realTime);
  return lines.join('\n');
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
