import { AppError, ErrorCodes } from '../core/errors.js';
import { rowKey, type StateRow } from './consumer-state.js';

/**
 * `occusim consumer-verify`'s comparison (issue 29 item 2): the state a consumer holds against
 * the state a correct consumer of the same deliveries must hold (`run --consumer-expect`).
 * Rows are matched by (type, subject, minute); values are compared as JSON with object keys
 * sorted, so `{"out":1,"in":2}` equals `{"in":2,"out":1}`.
 */
export interface Difference {
  type: string;
  subject: string;
  minute: number;
  expected?: unknown;
  actual?: unknown;
  truth?: number | null;
}

export interface Verdict {
  expected: number;
  actual: number;
  matching: number;
  missing: number;
  extra: number;
  wrong: number;
  /** The first differences of each kind, in (type, subject, minute) order, at most `FIRST` each. */
  first: { missing: Difference[]; extra: Difference[]; wrong: Difference[] };
}

/** Differences listed per kind. */
export const FIRST = 10;

/** A malformed state line: where (`file:line`), and why. */
const stateLineError = (source: string, line: number, why: string): AppError =>
  new AppError(ErrorCodes.CONSUMER_STATE_INVALID, why, { path: `${source}:${line}` });

/** Longest line of a state file (a row is under 200 bytes; a value of another consumer's making may be larger). */
export const MAX_LINE_BYTES = 64 * 1024;

/** One line of a state file, checked against the documented shape; null for a blank line. */
export function parseStateLine(text: string, source: string, line: number): StateRow | null {
  if (text.trim() === '') return null;
  if (text.length > MAX_LINE_BYTES) throw stateLineError(source, line, `a line is at most ${MAX_LINE_BYTES} bytes`);
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw stateLineError(source, line, 'not JSON');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw stateLineError(source, line, 'not a JSON object');
  const r = o as Record<string, unknown>;
  for (const f of ['type', 'subject'] as const)
    if (typeof r[f] !== 'string' || r[f] === '')
      throw stateLineError(source, line, `${f}: a non-empty string is required`);
  if (typeof r.minute !== 'number' || !Number.isInteger(r.minute) || r.minute % 60_000 !== 0)
    throw stateLineError(
      source,
      line,
      'minute: an integer number of ms since the epoch, a multiple of 60000, is required',
    );
  if (!('value' in r)) throw stateLineError(source, line, 'value: required');
  if (r.subscription !== undefined && typeof r.subscription !== 'string')
    throw stateLineError(source, line, 'subscription: a string when given');
  const row: StateRow = { type: r.type as string, subject: r.subject as string, minute: r.minute, value: r.value };
  if (typeof r.subscription === 'string') row.subscription = r.subscription;
  if (typeof r.truth === 'number' || r.truth === null) row.truth = r.truth;
  return row;
}

export function compareStates(expected: Iterable<StateRow>, actual: Iterable<StateRow>): Verdict {
  const want = new Map<string, StateRow>();
  for (const r of expected) want.set(rowKey(r), r);
  const got = new Map<string, StateRow>();
  for (const r of actual) got.set(rowKey(r), r);
  const missing: Difference[] = [];
  const wrong: Difference[] = [];
  const extra: Difference[] = [];
  let matching = 0;
  for (const [k, w] of want) {
    const a = got.get(k);
    const place = {
      type: w.type,
      subject: w.subject,
      minute: w.minute,
      ...(w.truth !== undefined ? { truth: w.truth } : {}),
    };
    if (!a) missing.push({ ...place, expected: w.value });
    else if (canonical(a.value) !== canonical(w.value)) wrong.push({ ...place, expected: w.value, actual: a.value });
    else matching++;
  }
  for (const [k, a] of got)
    if (!want.has(k)) extra.push({ type: a.type, subject: a.subject, minute: a.minute, actual: a.value });
  const firstOf = (ds: Difference[]): Difference[] => ds.sort(compareDifferences).slice(0, FIRST);
  return {
    expected: want.size,
    actual: got.size,
    matching,
    missing: missing.length,
    extra: extra.length,
    wrong: wrong.length,
    first: { missing: firstOf(missing), extra: firstOf(extra), wrong: firstOf(wrong) },
  };
}

export function passed(v: Verdict): boolean {
  return v.missing === 0 && v.extra === 0 && v.wrong === 0;
}

function compareDifferences(a: Difference, b: Difference): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  if (a.subject !== b.subject) return a.subject < b.subject ? -1 : 1;
  return a.minute - b.minute;
}

/** JSON with object keys sorted at every depth. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
