import type { ColumnReport, Run } from './point-columns.js';
import type { PageInfo } from './shape.js';

/**
 * JSON and CSV text of a flat (optionally paged) report, written straight from the runs of
 * point-columns.ts: each window's labels and each target's metadata are formatted once, and a
 * point is a few string concatenations instead of an object spread and `JSON.stringify`. The
 * bytes are those of `JSON.stringify({ data, page_info })` and `toCsv` over the points of
 * report.ts (point-columns.test.ts compares them). Output comes in chunks of about 1 MB, so a
 * large report streams instead of being held whole in memory.
 */
const CHUNK = 1 << 20;

/** The points `[lo, hi)` of the page, and its `page_info` (as `paginate` in shape.ts). */
export function pageOf(
  total: number,
  page: { page: number; limit: number } | null,
): { lo: number; hi: number; pageInfo: PageInfo | null } {
  if (!page) return { lo: 0, hi: total, pageInfo: null };
  const lo = Math.min(total, (page.page - 1) * page.limit);
  const hi = Math.min(total, page.page * page.limit);
  return {
    lo,
    hi,
    pageInfo: {
      page: page.page,
      page_item_count: hi - lo,
      total_item_count: total,
      total_pages: Math.max(1, Math.ceil(total / page.limit)),
    },
  };
}

const inner = (o: object): string => JSON.stringify(o).slice(1, -1);
const FIELDS = ['in', 'out'] as const;
const CUM_KEYS = ['in_csum', 'out_csum', 'delta_sum', 'delta_csum'] as const;

/** Visits the points of each run that fall in `[lo, hi)` of the concatenated runs. */
function* slices(runs: readonly Run[], lo: number, hi: number): Generator<{ run: Run; from: number; to: number }> {
  let offset = 0;
  for (const run of runs) {
    const from = Math.max(lo - offset, 0);
    const to = Math.min(hi - offset, run.n);
    offset += run.n;
    if (from < to) yield { run, from, to };
    if (offset >= hi) return;
  }
}

/** Bytes of a number as JSON writes it; small non-negative integers come from a table. */
const SMALL = Array.from({ length: 4096 }, (_, i) => Buffer.from(String(i)));
const NULL = Buffer.from('null');

function putNumber(buf: Buffer, o: number, v: number): number {
  if (v >= 0 && v < 4096 && Number.isInteger(v)) {
    const b = SMALL[v] as Buffer;
    buf.set(b, o);
    return o + b.length;
  }
  if (Number.isNaN(v)) {
    buf.set(NULL, o);
    return o + 4;
  }
  const s = String(v); // ASCII: digits, '.', '-', 'e', '+'
  for (let i = 0; i < s.length; i++) buf[o + i] = s.charCodeAt(i);
  return o + s.length;
}

/**
 * Writes each point as bytes: per run, the text before the window labels and between the
 * labels and the value is encoded once; per window, the labels; per point, five copies.
 */
export function* jsonChunks(rep: ColumnReport, page: { page: number; limit: number } | null): Generator<Buffer> {
  const { lo, hi, pageInfo } = pageOf(rep.total, page);
  const labels = rep.windows.map((w) => Buffer.from(inner(w.labels)));
  const maxLabel = labels.reduce((m, b) => Math.max(m, b.length), 0);
  const cumKeys = CUM_KEYS.map((k) => Buffer.from(`,"${k}":`));
  let buf = Buffer.allocUnsafe(CHUNK);
  let o = buf.write('{"data":[');
  let first = true;
  for (const { run, from, to } of slices(rep.runs, lo, hi)) {
    const meta = inner(run.target.meta);
    const heads = (run.traffic ? FIELDS : (['value'] as const)).map(
      (f) =>
        [
          Buffer.from(`{"field":"${f}","measurement":${JSON.stringify(run.measurement)},`),
          Buffer.from(`,{"field":"${f}","measurement":${JSON.stringify(run.measurement)},`),
        ] as const,
    );
    const tail = Buffer.from(`${meta === '' ? '' : `,${meta}`},"value":`);
    // Room for the largest point of this run: the buffer is handed out before it could overflow.
    const room = (heads[0]?.[1].length ?? 0) + maxLabel + tail.length + 32 + (run.traffic ? 4 * 48 : 0) + 1;
    if (room > buf.length) buf = Buffer.concat([buf.subarray(0, o), Buffer.allocUnsafe(room)]);
    const { win, val, traffic } = run;
    for (let i = from; i < to; i++) {
      if (o + room > buf.length) {
        yield buf.subarray(0, o);
        buf = Buffer.allocUnsafe(Math.max(CHUNK, room));
        o = 0;
      }
      const head = (heads[traffic ? (traffic.field[i] as number) : 0] as readonly [Buffer, Buffer])[first ? 0 : 1];
      first = false;
      buf.set(head, o);
      o += head.length;
      const label = labels[win[i] as number] as Buffer;
      buf.set(label, o);
      o += label.length;
      buf.set(tail, o);
      o = putNumber(buf, o + tail.length, val[i] as number);
      if (traffic) {
        for (let j = 0; j < 4; j++) {
          buf.set(cumKeys[j] as Buffer, o);
          o = putNumber(buf, o + (cumKeys[j] as Buffer).length, traffic.cum[i * 4 + j] as number);
        }
      }
      buf[o++] = 0x7d; // }
    }
  }
  yield Buffer.concat([
    buf.subarray(0, o),
    Buffer.from(`]${pageInfo ? `,"page_info":${JSON.stringify(pageInfo)}` : ''}}`),
  ]);
}

function csvCell(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

const LABELS = ['time', 'start', 'stop', 'timezone_offset'] as const;

/** Keys of every point of a run, in the order of the point objects of report.ts. */
function keysOf(run: Run): string[] {
  return [
    'field',
    'measurement',
    ...LABELS,
    ...Object.keys(run.target.meta),
    'value',
    ...(run.traffic ? CUM_KEYS : []),
  ];
}

/** A CSV row as parts: constant text, or a cell computed from (window index, point index). */
type Part = string | ((k: number, i: number) => string);

function rowParts(
  run: Run,
  cols: readonly string[],
  labelBlock: readonly string[],
  labelCells: readonly string[][],
): Part[] {
  const has = new Set(keysOf(run));
  const traffic = run.traffic;
  const cell = (c: string): Part => {
    if (!has.has(c)) return '';
    if (c === 'field') return traffic ? (_k, i) => FIELDS[traffic.field[i] as number] as string : 'value';
    if (c === 'measurement') return csvCell(run.measurement);
    if (c === 'value') return (_k, i) => (Number.isNaN(run.val[i] as number) ? '' : String(run.val[i]));
    const cum = (CUM_KEYS as readonly string[]).indexOf(c);
    if (cum >= 0 && traffic) return (_k, i) => String(traffic.cum[i * 4 + cum]);
    const j = (LABELS as readonly string[]).indexOf(c);
    if (j >= 0) return (k) => (labelCells[k] as string[])[j] as string;
    return csvCell(run.target.meta[c] ?? '');
  };
  const parts: Part[] = [];
  const blockAt = cols.indexOf('time');
  for (let c = 0; c < cols.length; c++) {
    if (c > 0) parts.push(',');
    // The four label columns are always adjacent (every point has them): one part per window.
    if (c === blockAt && cols.slice(c, c + 4).join() === LABELS.join()) {
      parts.push((k) => labelBlock[k] as string);
      c += 3;
    } else parts.push(cell(cols[c] as string));
  }
  // Merge adjacent constant text.
  const merged: Part[] = [];
  for (const p of parts) {
    const last = merged[merged.length - 1];
    if (typeof p === 'string' && typeof last === 'string') merged[merged.length - 1] = last + p;
    else merged.push(p);
  }
  return merged;
}

export function* csvChunks(rep: ColumnReport, page: { page: number; limit: number } | null): Generator<string> {
  const { lo, hi } = pageOf(rep.total, page);
  const parts = [...slices(rep.runs, lo, hi)];
  // Columns in first-seen order across the points (toCsv in shape.ts); a run's points share keys.
  const cols = [...new Set(parts.flatMap((s) => keysOf(s.run)))];
  const labelCells = rep.windows.map((w) => LABELS.map((l) => csvCell(w.labels[l])));
  const labelBlock = labelCells.map((cells) => cells.join(','));
  let out = `${cols.join(',')}\r\n`;
  for (const { run, from, to } of parts) {
    const row = rowParts(run, cols, labelBlock, labelCells);
    for (let i = from; i < to; i++) {
      const k = run.win[i] as number;
      for (const p of row) out += typeof p === 'string' ? p : p(k, i);
      out += '\r\n';
      if (out.length >= CHUNK) {
        yield out;
        out = '';
      }
    }
  }
  yield out;
}
