import { formatMetricValue } from '../run/expectations.js';
import { DAY_MS } from '../core/time.js';
import type { ReportDataset, SpaceSeries, DoorSeries } from './dataset.js';
import { barChart, escapeXml, linePlot, type LineSeries } from './svg.js';

/**
 * `--html report.html`: the run report as one self-contained page (inline CSS and SVG, no
 * script needed to read it, nothing fetched): a plot per space of measured vs true occupancy
 * per minute, door counts vs true crossings, detector accuracy per sensor array, the latency
 * histogram, the delivery ledger, webhook deliveries and the full accuracy tables. The numbers
 * behind the plots are embedded as JSON (`#occusim-report-data`) for anyone who wants them.
 */

const COLOURS = {
  truth: '#222',
  presence: '#1f77b4',
  raw: '#ff7f0e',
  calibrated: '#2ca02c',
  in: '#1f77b4',
  out: '#d62728',
};

const CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem auto;max-width:780px;color:#222}
h1{font-size:1.4rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}figure{margin:1rem 0}figcaption{font-size:12px;color:#555}
table{border-collapse:collapse;font-size:12px;margin:.5rem 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th:first-child,td:first-child{text-align:left}
svg text{font:11px system-ui,sans-serif;fill:#333}svg .t{font-weight:600;font-size:12px}svg .yl{text-anchor:end}svg .xl{text-anchor:middle}svg .al{text-anchor:middle}
svg .g{stroke:#eee}svg .z{stroke:#999}svg .mk{stroke:#888;stroke-dasharray:4 3}svg .mkl{fill:#666}svg .lg{font-size:11px}.kpi{display:flex;gap:1.5rem;flex-wrap:wrap}.kpi div{background:#f5f5f5;padding:.4rem .8rem;border-radius:4px}`;

export function reportHtml(d: ReportDataset): string {
  const r = d.result;
  const timeLabel = timeFormatter(d.scenario.zone, d.scenario.durationMs > DAY_MS);
  const plotted = d.spaces;
  const parts = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>occusim report: ${escapeXml(d.scenario.name)}</title><style>${CSS}</style></head><body>`,
    `<h1>occusim run report: ${escapeXml(d.scenario.name)}</h1>`,
    `<p>Seed ${d.scenario.seed}; start ${escapeXml(r.scenario.startLocal)} (${escapeXml(d.scenario.zone)}); ${Math.round(d.scenario.durationMs / 60_000)} simulated minutes; ${r.scenario.sensors} sensors, ${r.scenario.hives} hives, ${r.scenario.people} people; fidelity ${escapeXml(r.scenario.fidelity)}.</p>`,
    `<div class="kpi"><div>room presence MAE <b>${r.presence.rooms.mae}</b></div><div>exact <b>${pct(r.presence.rooms.exactRate)}</b></div><div>traffic recall <b>${pct(r.traffic.overall.recall)}</b></div><div>packets lost <b>${r.messages.lost}</b></div><div>latency p99 <b>${r.latencyMs.p99} ms</b></div></div>`,
    `<h2 id="occupancy">Occupancy per space, measured vs true</h2><p>Per minute, in ${escapeXml(d.scenario.zone)} time. True: the median head count of the minute (as the platform computes its own). Presence: the platform's presence occupancy (gaps: no sample reached it). Traffic raw / calibrated: occupancy from door counts since the local day's first instant (dashed line: the midnight reset).</p>`,
    ...plotted.map((s) => spaceFigure(s, timeLabel)),
    d.spacesTotal > plotted.length
      ? `<p>${d.spacesTotal - plotted.length} more spaces: their figures are in the tables below, their per-minute truth in --truth.</p>`
      : '',
    `<h2 id="doors">Door counts vs true crossings</h2><p>Cumulative counts since the run's start, in the counting sensor's sense.</p>`,
    ...d.doors.map((s) => doorFigure(s, timeLabel)),
    d.doors.length === 0 ? '<p>No traffic sensors.</p>' : '',
    d.doorsTotal > d.doors.length
      ? `<p>${d.doorsTotal - d.doors.length} more traffic sensors in the tables below.</p>`
      : '',
    detectorSection(d),
    `<h2 id="latency">Latency</h2>`,
    barChart({
      title: 'Sensing → processed latency (simulated), packets per bucket',
      labels: [...d.latency.boundsS.map((b) => `≤${b}s`), `>${d.latency.boundsS.at(-1) ?? 0}s`],
      values: d.latency.counts,
      yLabel: 'packets',
      attrs: { class: 'latency-histogram' },
    }),
    `<p>p50 ${r.latencyMs.p50} ms, p90 ${r.latencyMs.p90} ms, p99 ${r.latencyMs.p99} ms, max ${r.latencyMs.max} ms.</p>`,
    ledgerSection(d),
    webhookSection(d),
    thresholdSection(d),
    tablesSection(d),
    `<script type="application/json" id="occusim-report-data">${jsonForScript(d)}</script>`,
    '</body></html>',
  ];
  return `${parts.join('\n')}\n`;
}

/** The run's thresholds, each with its measured value and verdict (as the summary's table and --junit). */
function thresholdSection(d: ReportDataset): string {
  const v = d.verdicts;
  if (!v || v.length === 0)
    return '<h2 id="thresholds">Thresholds</h2><p>No thresholds in this run (a scenario\'s <code>expect:</code> or <code>--expect</code>).</p>';
  const failed = v.filter((x) => !x.passed).length;
  return `<h2 id="thresholds">Thresholds</h2><p>${v.length} threshold(s): ${failed === 0 ? 'all passed' : `<b>${failed} failed</b>`}.</p>${table(
    ['threshold', 'measured', 'verdict'],
    v.map((x) => [x.expectation.text, formatMetricValue(x.expectation.metric, x.measured), x.passed ? 'pass' : 'FAIL']),
  )}`;
}

function spaceFigure(s: SpaceSeries, timeLabel: (ms: number) => string): string {
  const series: LineSeries[] = [
    { name: 'true', values: s.truth, colour: COLOURS.truth, step: true, width: 4, opacity: 0.3 },
  ];
  if (s.presence) series.push({ name: 'presence', values: s.presence, colour: COLOURS.presence, step: true });
  if (s.trafficRaw) series.push({ name: 'traffic raw', values: s.trafficRaw, colour: COLOURS.raw, step: true });
  if (s.trafficCalibrated)
    series.push({ name: 'traffic calibrated', values: s.trafficCalibrated, colour: COLOURS.calibrated, step: true });
  const svg = linePlot({
    title: `${s.name} (${s.kind}${s.kind === 'floor' ? '' : `, ${s.floor}`})`,
    xs: s.minutes,
    series,
    markers: s.resets.map((x) => ({ x, label: 'midnight reset' })),
    xLabel: timeLabel,
    yLabel: 'people',
    attrs: { class: 'space-plot', 'data-space-id': s.id },
  });
  const coverage = [s.presence ? 'presence' : null, s.trafficRaw ? 'traffic' : null].filter((x) => x !== null);
  return `<figure id="space-${escapeXml(s.id)}">${svg}<figcaption>${escapeXml(s.name)}: ${coverage.length ? `measured by ${coverage.join(' and ')}` : 'no sensor coverage: truth only'}; ${s.minutes.length} minutes.</figcaption></figure>`;
}

function doorFigure(s: DoorSeries, timeLabel: (ms: number) => string): string {
  const cum = (xs: readonly number[]): number[] => {
    let a = 0;
    return xs.map((v) => (a += v));
  };
  const svg = linePlot({
    title: `${s.name} at ${s.door}`,
    xs: s.minutes,
    series: [
      { name: 'counted in', values: cum(s.measuredIn), colour: COLOURS.in, step: true },
      { name: 'true in', values: cum(s.trueIn), colour: COLOURS.in, dash: '4 3', step: true },
      { name: 'counted out', values: cum(s.measuredOut), colour: COLOURS.out, step: true },
      { name: 'true out', values: cum(s.trueOut), colour: COLOURS.out, dash: '4 3', step: true },
    ],
    xLabel: timeLabel,
    yLabel: 'crossings',
    attrs: { class: 'door-plot', 'data-sensor-id': s.sensor },
  });
  return `<figure>${svg}</figure>`;
}

function detectorSection(d: ReportDataset): string {
  const det = d.result.detector;
  if (!det) return '<h2 id="detector">Detector accuracy</h2><p>Not measured in this run.</p>';
  // Per sensor array (model): reports pooled over its sensors.
  const arrays = new Map<string, { samples: number; exact: number; abs: number }>();
  for (const s of det.presence.sensors) {
    const a = arrays.get(s.model) ?? { samples: 0, exact: 0, abs: 0 };
    a.samples += s.samples;
    a.exact += s.exactRate * s.samples;
    a.abs += s.mae * s.samples;
    arrays.set(s.model, a);
  }
  const rows = [...arrays].map(([model, a]) => [
    model,
    a.samples,
    pct(a.samples ? a.exact / a.samples : 0),
    round3(a.samples ? a.abs / a.samples : 0),
  ]);
  return [
    '<h2 id="detector">Detector accuracy per sensor array</h2>',
    barChart({
      title: 'Presence reports with the exact count, % per array',
      labels: rows.map((r) => String(r[0])),
      values: rows.map((r) => Number(String(r[2]).replace('%', ''))),
      yLabel: '%',
      attrs: { class: 'detector-chart' },
    }),
    table(['array', 'reports', 'exact', 'MAE'], rows),
    table(
      ['presence sensor', 'array', 'reports', 'exact', 'MAE', 'location error m'],
      det.presence.sensors.map((s) => [s.name, s.model, s.samples, pct(s.exactRate), s.mae, s.locErrorM]),
    ),
    table(
      ['traffic sensor', 'array', 'true crossings', 'counted', 'precision', 'recall'],
      det.traffic.sensors.map((s) => [s.name, s.model, s.trueCrossings, s.counted, pct(s.precision), pct(s.recall)]),
    ),
  ].join('\n');
}

function ledgerSection(d: ReportDataset): string {
  const m = d.result.messages;
  const head = `<h2 id="ledger">Delivery ledger</h2>${table(['packets sent', 'delivered', 'dead-lettered', 'lost', 'batches sent', 'processed', 'duplicates'], [[m.packetsSent, m.packetsDelivered, m.deadLettered, m.lost, m.batchesSent, m.batchesProcessed, m.duplicateBatches]])}`;
  const del = d.result.delivery;
  if (!del) return head;
  return `${head}${table(
    [
      'hive',
      'generated',
      'mesh delivered',
      'mesh dropped',
      'buffer overflow',
      'acked',
      'retransmitted',
      'duplicated',
      'undelivered',
      'lost',
    ],
    del.hives.map((h) => [
      h.hive,
      h.generated,
      h.meshDelivered,
      h.meshDropped,
      h.bufferOverflow,
      h.acked,
      h.retransmitted,
      h.duplicated,
      h.undelivered,
      h.lost,
    ]),
  )}`;
}

function webhookSection(d: ReportDataset): string {
  const w = d.result.webhooks;
  if (!w || w.length === 0) return '<h2 id="webhooks">Webhook deliveries</h2><p>No webhooks in this run.</p>';
  return `<h2 id="webhooks">Webhook deliveries</h2>${table(
    ['subscription', 'delivered', 'retried', 'dead-lettered', 'disabled', 'pending'],
    w.map((s) => [s.name, s.delivered, s.retried, s.deadLettered, s.disabled, s.pending]),
  )}`;
}

function tablesSection(d: ReportDataset): string {
  const r = d.result;
  return [
    '<h2 id="tables">Accuracy tables</h2>',
    table(
      ['space', 'kind', 'floor', 'minutes', 'missing', 'MAE', 'exact', '±1', 'mean true', 'mean measured'],
      r.presence.spaces.map((s) => [
        s.name,
        s.kind,
        s.floor,
        s.minutes,
        s.missingMinutes,
        s.mae,
        pct(s.exactRate),
        pct(s.withinOneRate),
        s.meanTrue,
        s.meanMeasured,
      ]),
    ),
    table(
      [
        'traffic occupancy',
        'kind',
        'minutes',
        'resets',
        'MAE raw',
        'MAE calibrated',
        'end-of-day drift raw',
        'calibrated',
      ],
      r.trafficOccupancy.spaces.map((s) => [
        s.name,
        s.kind,
        s.minutes,
        s.resets,
        s.maeRaw,
        s.maeCalibrated,
        s.endOfDayDriftRaw,
        s.endOfDayDriftCalibrated,
      ]),
    ),
    table(
      ['traffic sensor', 'door', 'counted in', 'true in', 'counted out', 'true out', 'recall in', 'recall out'],
      r.traffic.sensors.map((s) => [
        s.name,
        s.door,
        s.measured.in,
        s.truth.in,
        s.measured.out,
        s.truth.out,
        pct(s.recall.in),
        pct(s.recall.out),
      ]),
    ),
  ].join('\n');
}

function table(head: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cell = (tag: string, v: string | number): string => `<${tag}>${escapeXml(String(v))}</${tag}>`;
  return `<table><tr>${head.map((h) => cell('th', h)).join('')}</tr>${rows.map((r) => `<tr>${r.map((v) => cell('td', v)).join('')}</tr>`).join('')}</table>`;
}

function pct(x: number): string {
  return `${Math.round(x * 1000) / 10}%`;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** JSON inside <script>: `<` escaped so no `</script>` in a name can end the element. */
function jsonForScript(d: ReportDataset): string {
  return JSON.stringify(d).replace(/</g, '\\u003c');
}

/** Local wall time of the site (HH:MM, with the date when the run spans days). */
function timeFormatter(zone: string, withDate: boolean): (ms: number) => string {
  const f = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hourCycle: 'h23',
    hour: '2-digit',
    minute: '2-digit',
    ...(withDate ? { month: '2-digit', day: '2-digit' } : {}),
  });
  return (ms) => f.format(ms);
}
