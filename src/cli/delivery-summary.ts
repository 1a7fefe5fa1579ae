import type { DeliveryReport } from '../hive/ledger.js';

/** Summary lines of the delivery ledger (mesh, hives, losses, hops, battery). */
export function formatDelivery(d: DeliveryReport): string[] {
  const o = d.overall;
  const hops = Object.entries(d.hopHistogram)
    .map(([h, n]) => `${h}: ${n}`)
    .join(', ');
  const lines = [
    `Delivery: ${o.generated} generated, ${o.acked} acked by the cloud, ${o.retransmitted} retransmitted (${o.duplicated} duplicates), ` +
      `lost ${o.meshDropped} in the mesh + ${o.meshQueueOverflow} mesh queue overflow + ${o.bufferOverflow} hive buffer overflow, ${o.undelivered} undelivered` +
      (o.offlineSuppressed > 0 ? `; ${o.offlineSuppressed} not produced (sensor offline)` : '') +
      (o.notYetOnline > 0 ? `; ${o.notYetOnline} not produced (hive not online yet, ramp)` : ''),
    `  mesh: ${(o.meshDeliveryRatio * 100).toFixed(3)}% of frames delivered after retries (${(o.meshAttemptSuccess * 100).toFixed(1)}% per attempt), hops {${hops}}, ${o.meshDuplicates} duplicates removed, ${o.meshRejoins} rejoins` +
      (d.brokerRestarts ? `; ${d.brokerRestarts} broker restart(s)` : '') +
      (d.storeRestarts ? `; ${d.storeRestarts} store restart(s)` : '') +
      (d.ingestKills ? `; ${d.ingestKills} ingest kill(s)` : ''),
    `  sensor → broker latency (sim): p50 ${sec(o.latencyMs.p50)}, p99 ${sec(o.latencyMs.p99)}, max ${sec(o.latencyMs.max)}; ${o.heartbeats} heartbeats`,
    `  battery: min ${(d.battery.minLevel * 100).toFixed(2)}%, shortest runtime ${d.battery.minRuntimeDays} days, change by ${d.battery.earliestChangeBy ?? 'n/a'}`,
  ];
  if (d.ramp) {
    lines.push(`  ramp: hives online over time (of ${d.ramp[0]?.hives ?? 0}):`);
    for (const r of d.ramp)
      lines.push(
        `    +${r.at.padEnd(8)} ${String(r.online).padStart(5)} online (+${r.cameOnline} at once, ${r.connected} of them logged in and sent)`,
      );
  }
  return lines;
}

function sec(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}
