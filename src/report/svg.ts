/**
 * Small SVG charts drawn as strings (no chart library, nothing fetched): a time-series line
 * plot with vertical markers, and a bar chart. Coordinates are rounded to 0.1 px so the same
 * data gives the same bytes.
 */
export interface LineSeries {
  name: string;
  values: ReadonlyArray<number | null>;
  colour: string;
  dash?: string;
  /** Draw as steps (a count held until the next minute) rather than straight segments. */
  step?: boolean;
  width?: number;
  opacity?: number;
}

export interface LinePlot {
  title: string;
  /** X values (epoch ms), ascending, one per value of every series. */
  xs: readonly number[];
  series: readonly LineSeries[];
  /** Vertical markers (e.g. the midnight reset). */
  markers?: ReadonlyArray<{ x: number; label: string }>;
  xLabel: (x: number) => string;
  yLabel: string;
  width?: number;
  height?: number;
  /** Attributes of the root <svg> (class, data-*), already escaped by the caller through `attr`. */
  attrs?: Record<string, string>;
}

const M = { left: 44, right: 12, top: 26, bottom: 34 };

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const r1 = (v: number): string => String(Math.round(v * 10) / 10);

function attrs(a: Record<string, string> | undefined): string {
  return Object.entries(a ?? {})
    .map(([k, v]) => ` ${k}="${escapeXml(v)}"`)
    .join('');
}

const TIME_STEPS_MIN = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080];

/** A round step of minutes or hours giving at most 8 ticks over `spanMs`. */
export function timeStep(spanMs: number): number {
  for (const m of TIME_STEPS_MIN) if (spanMs / (m * 60_000) <= 8) return m * 60_000;
  return Math.ceil(spanMs / 8 / 86_400_000) * 86_400_000;
}

/** 1, 2 or 5 × 10^k, so that about `target` ticks span `max`. */
export function niceStep(max: number, target = 5): number {
  if (!(max > 0)) return 1;
  const raw = max / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

export function linePlot(p: LinePlot): string {
  const W = p.width ?? 720;
  const H = p.height ?? 220;
  const x0 = p.xs[0] ?? 0;
  const x1 = Math.max(p.xs.at(-1) ?? 1, x0 + 1);
  // Traffic occupancy can go below zero (a missed entry): the axis follows it.
  let yMax = 1;
  let yMin = 0;
  for (const s of p.series) {
    for (const v of s.values) {
      if (v === null) continue;
      if (v > yMax) yMax = v;
      if (v < yMin) yMin = v;
    }
  }
  const yStep = niceStep(yMax - yMin, 4);
  yMax = Math.ceil(yMax / yStep) * yStep;
  yMin = Math.floor(yMin / yStep) * yStep;
  const px = (x: number): number => M.left + ((x - x0) / (x1 - x0)) * (W - M.left - M.right);
  const py = (y: number): number => H - M.bottom - ((y - yMin) / (yMax - yMin)) * (H - M.top - M.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}"${attrs(p.attrs)}>`,
  ];
  out.push(`<text x="${M.left}" y="16" class="t">${escapeXml(p.title)}</text>`);
  // Grid and axes.
  for (let y = yMin; y <= yMax + 1e-9; y += yStep) {
    out.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${r1(py(y))}" y2="${r1(py(y))}" class="${y === 0 ? 'z' : 'g'}"/><text x="${M.left - 4}" y="${r1(py(y) + 4)}" class="yl">${r1(y)}</text>`,
    );
  }
  const xStep = timeStep(x1 - x0);
  for (let x = Math.ceil(x0 / xStep) * xStep; x <= x1; x += xStep) {
    out.push(
      `<line x1="${r1(px(x))}" x2="${r1(px(x))}" y1="${H - M.bottom}" y2="${H - M.bottom + 4}" class="z"/><text x="${r1(px(x))}" y="${H - M.bottom + 15}" class="xl">${escapeXml(p.xLabel(x))}</text>`,
    );
  }
  out.push(
    `<text x="12" y="${r1((H - M.bottom + M.top) / 2)}" class="al" transform="rotate(-90 12 ${r1((H - M.bottom + M.top) / 2)})">${escapeXml(p.yLabel)}</text>`,
  );
  for (const m of p.markers ?? []) {
    out.push(
      `<line x1="${r1(px(m.x))}" x2="${r1(px(m.x))}" y1="${M.top}" y2="${H - M.bottom}" class="mk"/><text x="${r1(px(m.x) + 3)}" y="${M.top + 10}" class="mkl">${escapeXml(m.label)}</text>`,
    );
  }
  for (const s of p.series) out.push(polyline(s, p.xs, px, py));
  // Legend along the bottom.
  let lx = M.left;
  for (const s of p.series) {
    out.push(
      `<line x1="${lx}" x2="${lx + 16}" y1="${H - 8}" y2="${H - 8}" stroke="${s.colour}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/><text x="${lx + 20}" y="${H - 4}" class="lg">${escapeXml(s.name)}</text>`,
    );
    lx += 28 + s.name.length * 6.2;
  }
  out.push('</svg>');
  return out.join('');
}

/** One <path> per series; a null value breaks the line (no sample that minute). */
function polyline(s: LineSeries, xs: readonly number[], px: (x: number) => number, py: (y: number) => number): string {
  const parts: string[] = [];
  let pen = false;
  s.values.forEach((v, i) => {
    const x = xs[i];
    if (v === null || x === undefined) {
      pen = false;
      return;
    }
    if (!pen) parts.push(`M${r1(px(x))} ${r1(py(v))}`);
    else if (s.step) parts.push(`H${r1(px(x))}V${r1(py(v))}`);
    else parts.push(`L${r1(px(x))} ${r1(py(v))}`);
    pen = true;
  });
  return `<path d="${parts.join('')}" fill="none" stroke="${s.colour}" stroke-width="${s.width ?? 1.6}"${s.opacity !== undefined ? ` stroke-opacity="${s.opacity}"` : ''}${s.dash ? ` stroke-dasharray="${s.dash}"` : ''} data-series="${escapeXml(s.name)}"/>`;
}

export interface BarChart {
  title: string;
  labels: readonly string[];
  values: readonly number[];
  yLabel: string;
  colour?: string;
  width?: number;
  height?: number;
  attrs?: Record<string, string>;
}

export function barChart(b: BarChart): string {
  const W = b.width ?? 720;
  const H = b.height ?? 200;
  let yMax = Math.max(1, ...b.values);
  const yStep = niceStep(yMax, 4);
  yMax = Math.ceil(yMax / yStep) * yStep;
  const n = Math.max(1, b.values.length);
  const bw = (W - M.left - M.right) / n;
  const py = (y: number): number => H - M.bottom - (y / yMax) * (H - M.top - M.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}"${attrs(b.attrs)}>`,
  ];
  out.push(`<text x="${M.left}" y="16" class="t">${escapeXml(b.title)}</text>`);
  for (let y = 0; y <= yMax + 1e-9; y += yStep)
    out.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${r1(py(y))}" y2="${r1(py(y))}" class="g"/><text x="${M.left - 4}" y="${r1(py(y) + 4)}" class="yl">${r1(y)}</text>`,
    );
  b.values.forEach((v, i) => {
    const x = M.left + i * bw;
    out.push(
      `<rect x="${r1(x + 2)}" y="${r1(py(v))}" width="${r1(Math.max(1, bw - 4))}" height="${r1(py(0) - py(v))}" fill="${b.colour ?? '#4c78a8'}"><title>${escapeXml(`${b.labels[i] ?? ''}: ${v}`)}</title></rect>`,
    );
    out.push(`<text x="${r1(x + bw / 2)}" y="${H - M.bottom + 14}" class="xl">${escapeXml(b.labels[i] ?? '')}</text>`);
  });
  out.push(
    `<text x="12" y="${r1((H - M.bottom + M.top) / 2)}" class="al" transform="rotate(-90 12 ${r1((H - M.bottom + M.top) / 2)})">${escapeXml(b.yLabel)}</text>`,
  );
  out.push('</svg>');
  return out.join('');
}
