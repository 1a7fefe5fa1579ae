import type { z } from 'zod';
import { didYouMean, type Finding, type Seg } from './diagnostics.js';
import { keysAt } from './schema.js';

/**
 * Structural problems (zod issues on the expanded tree) in the words of the file format:
 * "unknown field `feild_of_view`; did you mean `field_of_view`?", "missing required field
 * `polygon`", "expected a number, got "3m"".
 */
export function issuesToFindings(
  issues: readonly z.core.$ZodIssue[],
  value: unknown,
  prefix: readonly Seg[] = [],
): Finding[] {
  const out: Finding[] = [];
  for (const issue of issues) {
    const rel = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    const path = [...prefix, ...rel];
    if (issue.code === 'unrecognized_keys') {
      const valid = keysAt(path).filter((k) => k !== 'use' && k !== 'repeat' && k !== '$schema');
      for (const key of issue.keys) {
        out.push({
          path: [...path, key],
          message: `unknown field \`${key}\`${didYouMean(key, valid)}`,
          severity: 'error',
          atKey: true,
        });
      }
      continue;
    }
    out.push({ path, message: describe(issue, valueAt(value, rel)), severity: 'error' });
  }
  return out;
}

function describe(issue: z.core.$ZodIssue, value: unknown): string {
  const field = issue.path.at(-1);
  switch (issue.code) {
    case 'invalid_type':
      return value === undefined
        ? `missing required field \`${String(field)}\``
        : `expected ${article(issue.expected)}, got ${show(value)}`;
    case 'invalid_union':
      return value === undefined
        ? `missing required field \`${String(field)}\``
        : `expected ${unionExpected(issue)}, got ${show(value)}`;
    case 'invalid_value':
      return `expected ${issue.values.map((v) => JSON.stringify(v)).join(' | ')}, got ${show(value)}`;
    case 'too_small':
      return tooSmall(issue, field, value);
    case 'too_big':
      return issue.origin === 'array'
        ? `at most ${String(issue.maximum)} items allowed`
        : `must be ${issue.inclusive ? '≤' : '<'} ${String(issue.maximum)}, got ${show(value)}`;
    case 'invalid_format':
      return formatMessage(issue.message, value);
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    default:
      if (issue.message === 'unknown IANA time zone' && typeof value === 'string') {
        return `unknown IANA time zone ${show(value)}${didYouMean(value, Intl.supportedValuesOf('timeZone'))}`;
      }
      return `${issue.message}, got ${show(value)}`;
  }
}

function tooSmall(issue: z.core.$ZodIssueTooSmall, field: Seg | PropertyKey | undefined, value: unknown): string {
  if (issue.origin === 'array') {
    const what = field === 'polygon' || field === 'outline' ? 'points' : 'items';
    return `needs at least ${String(issue.minimum)} ${what}, got ${Array.isArray(value) ? value.length : 0}`;
  }
  if (issue.origin === 'string') return 'must not be empty';
  return `must be ${issue.inclusive ? '≥' : '>'} ${String(issue.minimum)}, got ${show(value)}`;
}

function formatMessage(message: string, value: unknown): string {
  if (message === 'bad duration') return `bad duration ${show(value)}: expected e.g. 500ms, 90s, 30m, 1h30m, 1d`;
  if (message === 'bad clock time') return `bad clock time ${show(value)}: expected HH:MM (00:00–23:59)`;
  return `${message}, got ${show(value)}`;
}

function unionExpected(issue: z.core.$ZodIssueInvalidUnion): string {
  const kinds = new Set<string>();
  for (const branch of issue.errors) {
    for (const e of branch) if (e.code === 'invalid_type' && e.path.length === 0) kinds.add(article(e.expected));
  }
  return kinds.size > 0 ? [...kinds].join(' or ') : 'a different value';
}

function article(expected: string): string {
  const words: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    int: 'an integer',
    boolean: 'true or false',
    array: 'a list',
    object: 'a mapping',
    tuple: 'a list',
    record: 'a mapping',
  };
  return words[expected] ?? expected;
}

/** A short rendering of the offending value for messages. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length <= 4 ? truncate(JSON.stringify(value)) : `a list of ${value.length}`;
  if (typeof value === 'object') return 'a mapping';
  return truncate(JSON.stringify(value));
}

function truncate(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

export function valueAt(tree: unknown, path: readonly Seg[]): unknown {
  let v = tree;
  for (const seg of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[seg];
  }
  return v;
}
