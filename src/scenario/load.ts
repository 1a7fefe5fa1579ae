import { readFileSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { hasErrors, sortDiagnostics, type Diagnostic, type Finding } from './diagnostics.js';
import { builtInScenarios, scenarioFileOf } from './built-in.js';
import { expandScenario } from './expand.js';
import { Locator, type Source } from './locate.js';
import type { Fidelity, ScenarioModel } from './model.js';
import type { FaultFile } from './network-schema.js';
import { resolveScenario } from './resolve.js';
import { vertexBudgetFinding } from './vertex-budget.js';

/**
 * Scenario loading: read → parse YAML/JSON (keeping positions) → expand templates and
 * repeats → validate and resolve into the `ScenarioModel`. Every problem is collected and
 * returned at once, sorted by position; nothing here throws for bad content.
 */
export type LoadResult =
  { ok: true; model: ScenarioModel; warnings: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] };

/** Values that replace the file's own (CLI flags `--seed`, `--duration`, `--fidelity`). */
export interface LoadOverrides {
  seed?: number;
  durationMs?: number;
  fidelity?: Fidelity;
  /** Replaces the scenario's `start` (same syntax: site-local time, or with an offset or Z). */
  start?: string;
  /** Replaces the scenario's `faults:` block (`--faults`, a schedule parsed by fault-schedule.ts). */
  faults?: readonly FaultFile[];
}

/**
 * Bounds on what is parsed at all. fleet.yaml (30,300 sensors) is 4 KB thanks to templates;
 * 4 MiB leaves room for hand-written fleets while a 50 MB file (a V8 out-of-memory after a
 * minute) is refused before it is read.
 */
export const MAX_SCENARIO_BYTES = 4 * 1024 * 1024;
/** Nodes resolved through YAML aliases; past this, an alias bomb. */
export const MAX_ALIAS_COUNT = 10_000;
/** Nesting of flow collections and block indentation; a scenario needs about 12 levels. */
export const MAX_NESTING = 64;
export const MAX_INDENT = 256;
/** Diagnostics printed at most, and characters per message (input text is quoted in some). */
export const MAX_DIAGNOSTICS = 100;
export const MAX_MESSAGE_CHARS = 300;

/** Loads a scenario file, or a shipped scenario by name (`quickstart`; built-in.ts). */
export function loadScenarioFile(nameOrPath: string, overrides: LoadOverrides = {}): LoadResult {
  const path = scenarioFileOf(nameOrPath);
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > MAX_SCENARIO_BYTES)
      return failure(
        path,
        1,
        1,
        `the file is ${size} bytes; scenario files are limited to ${MAX_SCENARIO_BYTES} bytes`,
      );
    bytes = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? `file not found (shipped scenarios, by name: ${builtInScenarios().join(', ')})`
        : `cannot read file (${code ?? (err as Error).message})`;
    return failure(path, 1, 1, reason);
  }
  const text = decodeUtf8(bytes);
  if (typeof text !== 'string')
    return failure(path, text.line, text.col, 'invalid UTF-8 (the file must be UTF-8 text)');
  return loadScenarioText(text, path, overrides);
}

function failure(file: string, line: number, col: number, message: string): LoadResult {
  return { ok: false, diagnostics: [{ file, line, col, path: '', message, severity: 'error' }] };
}

/**
 * The text, or where its first invalid UTF-8 sequence is. readFileSync(…, 'utf8') replaces
 * bad bytes with U+FFFD silently, so names with invalid UTF-8 were accepted as something else.
 */
function decodeUtf8(bytes: Buffer): string | { line: number; col: number } {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Decode line by line: only the bad line is scanned byte by byte for its column.
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] !== 0x0a) continue;
      const slice = bytes.subarray(start, i);
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(slice);
      } catch {
        let ok = 0;
        while (ok < slice.length && isValidPrefix(slice.subarray(0, ok + 1))) ok++;
        return { line, col: Buffer.from(slice.subarray(0, ok)).toString('utf8').length + 1 };
      }
      line++;
      start = i + 1;
    }
    return { line: 1, col: 1 };
  }
}

/** True when `bytes` is valid UTF-8 or valid up to an unfinished last character. */
function isValidPrefix(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

export function loadScenarioText(text: string, file: string, overrides: LoadOverrides = {}): LoadResult {
  if (text.length > MAX_SCENARIO_BYTES)
    return failure(file, 1, 1, `the text is ${text.length} characters; scenarios are limited to ${MAX_SCENARIO_BYTES}`);
  const deep = nestingProblem(text);
  if (deep !== null) return failure(file, deep.line, deep.col, deep.message);
  const lines = new LineCounter();
  let doc: Document;
  try {
    doc = parseDocument(text, { lineCounter: lines, merge: true, prettyErrors: true });
  } catch (err) {
    return { ok: false, diagnostics: [internal(file, err)] };
  }
  if (doc.errors.length > 0) {
    return {
      ok: false,
      diagnostics: bounded(sortDiagnostics(doc.errors.map((e) => syntaxDiagnostic(file, e.message, e.linePos?.[0])))),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // yaml's own guard ("Excessive alias count indicates a resource exhaustion attack") is the input's fault.
    if (err instanceof ReferenceError || /alias/i.test((err as Error).message)) {
      const at = firstAlias(text);
      return failure(
        file,
        at.line,
        at.col,
        `YAML aliases expand to more than ${MAX_ALIAS_COUNT} nodes (an alias bomb?)`,
      );
    }
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
    const replaced = isDoc
      ? {
          ...data,
          ...(overrides.start !== undefined ? { start: overrides.start } : {}),
          ...(overrides.faults !== undefined ? { faults: overrides.faults } : {}),
        }
      : data;
    const expansion = expandScenario(replaced);
    const locator = new Locator(source, expansion.tree, expansion.origins);
    const findings: Finding[] = [...expansion.findings];
    const overBudget = expansion.tooLarge ? null : vertexBudgetFinding(expansion.tree);
    if (overBudget !== null) return { ok: false, diagnostics: located(locator, [...findings, overBudget]) };
    // An item whose expansion failed is left out and the rest is still checked, so one
    // mistake does not hide others; only a runaway expansion stops here.
    if (!expansion.tooLarge) {
      const fileStart = overrides.start !== undefined && isDoc ? (data as Record<string, unknown>)['start'] : undefined;
      const r = resolveScenario(
        expansion.tree,
        modelFile,
        typeof fileStart === 'string' ? { ...overrides, fileStart } : overrides,
        (p) => locator.pointerOf(p),
      );
      // Not push(...): a fleet can warn once per sensor, and a spread of ~120,000 overflows the stack.
      for (const f of r.findings) findings.push(f);
      if (!hasErrors(findings))
        return { ok: true, model: r.model, warnings: fromFlags(located(locator, findings), overrides) };
    }
    return { ok: false, diagnostics: fromFlags(located(locator, findings), overrides) };
  } catch (err) {
    return { ok: false, diagnostics: [internal(source.file, err)] };
  }
}

/** A problem of a `--faults` schedule is the flag's, not a place in the file (which has no such faults). */
function fromFlags(diagnostics: Diagnostic[], overrides: LoadOverrides): Diagnostic[] {
  if (overrides.faults === undefined) return diagnostics;
  return diagnostics.map((d) =>
    d.path.startsWith('faults[')
      ? {
          ...d,
          file: '--faults',
          line: 1,
          col: 1,
          path: `fault ${Number(/^faults\[(\d+)\]/.exec(d.path)?.[1] ?? 0) + 1}${d.path.replace(/^faults\[\d+\]/, '')}`,
        }
      : d,
  );
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
  return bounded(sortDiagnostics(out));
}

/**
 * At most MAX_DIAGNOSTICS, each message at most MAX_MESSAGE_CHARS: 50 MB of random bytes
 * once printed one 121 MB error line.
 */
function bounded(list: readonly Diagnostic[]): Diagnostic[] {
  const out = list
    .slice(0, MAX_DIAGNOSTICS)
    .map((d) =>
      d.message.length > MAX_MESSAGE_CHARS
        ? { ...d, message: `${d.message.slice(0, MAX_MESSAGE_CHARS)}… (${d.message.length} characters)` }
        : d,
    );
  const last = list[MAX_DIAGNOSTICS];
  if (last !== undefined)
    out.push({ ...last, path: '', message: `… and ${list.length - MAX_DIAGNOSTICS} more problem(s)` });
  return out;
}

/** Line and column of the first alias (`*name`) in the text, for the alias-bomb diagnostic. */
function firstAlias(text: string): { line: number; col: number } {
  const m = /(^|[\s,[{:-])\*[^\s,\]}]+/m.exec(text);
  if (!m) return { line: 1, col: 1 };
  const at = m.index + m[1]!.length;
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return { line, col: at - before.lastIndexOf('\n') };
}

function syntaxDiagnostic(file: string, message: string, pos: { line: number; col: number } | undefined): Diagnostic {
  // yaml's messages end with "at line L, column C" and a code excerpt: the position is ours to print.
  const text = message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;
  return {
    file,
    line: pos?.line ?? 1,
    col: pos?.col ?? 1,
    path: '',
    message: `syntax error: ${text}`,
    severity: 'error',
  };
}

/** A bug in the loader itself: still a diagnostic, never a stack trace. */
function internal(file: string, err: unknown): Diagnostic {
  const message = err instanceof Error ? err.message : String(err);
  return {
    file,
    line: 1,
    col: 1,
    path: '',
    message: `internal error while loading the scenario: ${message}`,
    severity: 'error',
  };
}

/**
 * The yaml parser recurses per nesting level: 100,000 `[` (200 KB) or 1,000 indented block
 * levels overflowed its stack ("syntax error: Maximum call stack size exceeded"). One linear
 * pass finds the first place deeper than the bounds (quotes and comments skipped).
 */
function nestingProblem(text: string): { line: number; col: number; message: string } | null {
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\n') {
      line++;
      lineStart = i + 1;
      let indent = 0;
      while (text[i + 1 + indent] === ' ') indent++;
      if (indent > MAX_INDENT)
        return { line, col: 1, message: `indented ${indent} columns deep; at most ${MAX_INDENT}` };
      continue;
    }
    if (quote !== '') {
      if (c === quote && (quote === "'" || text[i - 1] !== '\\')) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === lineStart || text[i - 1] === ' ')) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else if (c === '[' || c === '{') {
      if (++depth > MAX_NESTING)
        return { line, col: i - lineStart + 1, message: `collections nested more than ${MAX_NESTING} levels deep` };
    } else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
  return null;
}
