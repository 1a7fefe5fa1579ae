import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { hasErrors, sortDiagnostics, type Diagnostic, type Finding } from './diagnostics.js';
import { expandScenario } from './expand.js';
import { Locator, type Source } from './locate.js';
import type { Fidelity, ScenarioModel } from './model.js';
import { resolveScenario } from './resolve.js';

/**
 * Scenario loading: read → parse YAML/JSON (keeping positions) → expand templates and
 * repeats → validate and resolve into the `ScenarioModel`. Every problem is collected and
 * returned at once, sorted by position; nothing here throws for bad content.
 */
export type LoadResult = { ok: true; model: ScenarioModel; warnings: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] };

/** Values that replace the file's own (CLI flags `--seed`, `--duration`, `--fidelity`). */
export interface LoadOverrides {
  seed?: number;
  durationMs?: number;
  fidelity?: Fidelity;
  /** Replaces the scenario's `start` (same syntax: site-local time, or with an offset or Z). */
  start?: string;
}

export function loadScenarioFile(path: string, overrides: LoadOverrides = {}): LoadResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot read file: ${(err as Error).message}`;
    return { ok: false, diagnostics: [{ file: path, line: 1, col: 1, path: '', message: reason, severity: 'error' }] };
  }
  return loadScenarioText(text, path, overrides);
}

export function loadScenarioText(text: string, file: string, overrides: LoadOverrides = {}): LoadResult {
  const lines = new LineCounter();
  let doc: Document;
  try {
    doc = parseDocument(text, { lineCounter: lines, merge: true, prettyErrors: true });
  } catch (err) {
    return { ok: false, diagnostics: [internal(file, err)] };
  }
  if (doc.errors.length > 0) {
    return { ok: false, diagnostics: sortDiagnostics(doc.errors.map((e) => syntaxDiagnostic(file, e.message, e.linePos?.[0]))) };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 10_000 });
  } catch (err) {
    return { ok: false, diagnostics: [internal(file, err)] };
  }
  return run(data, { file, doc, lines }, resolvePath(file), overrides);
}

export function loadScenarioObject(doc: unknown, file = '<inline>', overrides: LoadOverrides = {}): LoadResult {
  return run(doc, { file, doc: null, lines: null }, file === '<inline>' ? file : resolvePath(file), overrides);
}

function run(data: unknown, source: Source, modelFile: string, overrides: LoadOverrides): LoadResult {
  try {
    const isDoc = typeof data === 'object' && data !== null && !Array.isArray(data);
    const expansion = expandScenario(overrides.start !== undefined && isDoc ? { ...data, start: overrides.start } : data);
    const locator = new Locator(source, expansion.tree, expansion.origins);
    const findings: Finding[] = [...expansion.findings];
    // An item whose expansion failed is left out and the rest is still checked, so one
    // mistake does not hide others; only a runaway expansion stops here.
    if (!expansion.tooLarge) {
      const r = resolveScenario(expansion.tree, modelFile, overrides, (p) => locator.pointerOf(p));
      findings.push(...r.findings);
      if (!hasErrors(findings)) return { ok: true, model: r.model, warnings: located(locator, findings) };
    }
    return { ok: false, diagnostics: located(locator, findings) };
  } catch (err) {
    return { ok: false, diagnostics: [internal(source.file, err)] };
  }
}

/** Located, sorted, and without repeats (every copy of a repeated item has the same mistake). */
function located(locator: Locator, findings: readonly Finding[]): Diagnostic[] {
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const f of findings) {
    const d = locator.diagnostic(f);
    const key = `${d.line}:${d.col}:${d.path}:${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return sortDiagnostics(out);
}

function syntaxDiagnostic(file: string, message: string, pos: { line: number; col: number } | undefined): Diagnostic {
  // yaml's messages end with "at line L, column C" and a code excerpt: the position is ours to print.
  const text = message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;
  return { file, line: pos?.line ?? 1, col: pos?.col ?? 1, path: '', message: `syntax error: ${text}`, severity: 'error' };
}

/** A bug in the loader itself: still a diagnostic, never a stack trace. */
function internal(file: string, err: unknown): Diagnostic {
  const message = err instanceof Error ? err.message : String(err);
  return { file, line: 1, col: 1, path: '', message: `internal error while loading the scenario: ${message}`, severity: 'error' };
}
