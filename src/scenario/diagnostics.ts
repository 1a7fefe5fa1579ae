/**
 * Located problems in a scenario file. Every check reports a `Finding` against a path in the
 * expanded scenario tree; `locate.ts` turns findings into `Diagnostic`s with file:line:col.
 */

/** One problem, located in the file. Line and column are 1-based; 0 when unknown. */
export interface Diagnostic {
  file: string;
  line: number;
  col: number;
  /** Human-readable path, e.g. `sites[0].buildings[0].floors[1].rooms[2].polygon`. */
  path: string;
  message: string;
  severity: 'error' | 'warning';
}

/** A key or index in a path through the scenario tree. */
export type Seg = string | number;

/** A problem found by a check, before it is located in the file. */
export interface Finding {
  /** Path in the expanded tree (templates and repeats already applied). */
  path: readonly Seg[];
  message: string;
  severity: 'error' | 'warning';
  /** Point at the key of the last segment rather than its value (unknown fields). */
  atKey?: boolean;
  /** `path` is a path in the file itself (problems found while expanding). */
  inFile?: boolean;
}

/** `file:line:col path: message`, with `warning: ` before the message of a warning. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.path === '' ? `${d.file}:${d.line}:${d.col}:` : `${d.file}:${d.line}:${d.col} ${d.path}:`;
  return `${where} ${d.severity === 'warning' ? 'warning: ' : ''}${d.message}`;
}

/** `sites[0].buildings[1].name`; identifiers that are not plain words are quoted. */
export function formatPath(path: readonly Seg[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_][\w-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Stable order: by line, then column; problems without a position first. */
export function sortDiagnostics(list: readonly Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => a.line - b.line || a.col - b.col);
}

export function hasErrors(list: readonly { severity: 'error' | 'warning' }[]): boolean {
  return list.some((d) => d.severity === 'error');
}

const MAX_SUGGEST_LENGTH = 64;

/** Levenshtein distance, O(|a|·|b|): only ever called on short names. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * The candidate closest to `name`, when close enough to be a plausible typo (distance at
 * most a third of the longer name, and at least 1 edit allowed), else null.
 */
export function closest(name: string, candidates: Iterable<string>): string | null {
  // editDistance is quadratic: a 100,000-character name against 600 zones took 7 s. No typo is that long.
  if (name.length > MAX_SUGGEST_LENGTH) return null;
  let best: string | null = null;
  let bestD = Infinity;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  if (best === null) return null;
  const limit = Math.max(1, Math.floor(Math.max(name.length, best.length) / 3));
  return bestD <= limit ? best : null;
}

/** ` Did you mean `x`?` or '' (ready to append to a message). */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const c = closest(name, candidates);
  return c === null ? '' : `; did you mean \`${c}\`?`;
}
