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

// The typo suggester lives in core: the API's request parsers name misspelt keys with it too.
export { closest, didYouMean, editDistance } from '../core/suggest.js';
