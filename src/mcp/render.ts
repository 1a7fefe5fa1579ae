/**
 * Text results for assistants that read text: capped, because a tool result lands in the
 * model's context (issue 13: ~25,000 characters, with a notice saying how to get the rest).
 */
export const TEXT_LIMIT = 25_000;

export function capText(text: string, limit = TEXT_LIMIT): string {
  if (text.length <= limit) return text;
  const cut = text.lastIndexOf('\n', limit - 200);
  const kept = text.slice(0, cut > 0 ? cut : limit - 200);
  return `${kept}\n… truncated: ${text.length - kept.length} more characters not shown. The structured result holds everything; narrow the request (fewer ids, max_results, depth) to read it as text.`;
}

/** Fixed-width table lines: header plus rows, columns padded to their widest cell. */
export function table(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | null>>): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null ? '—' : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (c ?? '').padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export const fmt = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined ? '—' : Number.isInteger(x) ? String(x) : x.toFixed(digits);
