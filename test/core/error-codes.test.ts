import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_TABLE, type ErrorCode, type ErrorRow } from '../../src/core/error-codes.js';
import { AppError, isErrorOf } from '../../src/core/errors.js';

/**
 * The error table (src/core/error-codes.ts) and its documentation (docs/errors.md) are the
 * same list, as fastify's errors test holds lib/errors.js and docs/Reference/Errors.md: every
 * code documented, every documented code real, each with the status the docs give, each
 * explained on its page, and each raised somewhere in src/ (a code nobody raises is a promise
 * the product does not keep).
 */
const root = resolve(new URL('../..', import.meta.url).pathname);
const rows = Object.entries(ERROR_TABLE) as Array<[ErrorCode, ErrorRow]>;

/** `| CODE | status | surfaces | meaning |` rows of docs/errors.md. */
function documented(): Map<string, { status: string; surfaces: string }> {
  const out = new Map<string, { status: string; surfaces: string }>();
  for (const line of readFileSync(join(root, 'docs/errors.md'), 'utf8').split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]+)` \| ([^|]*) \| ([^|]*) \|/.exec(line);
    if (!m) continue;
    if (out.has(m[1] as string)) throw new Error(`docs/errors.md lists ${m[1]} twice`);
    out.set(m[1] as string, { status: (m[2] as string).trim(), surfaces: (m[3] as string).trim() });
  }
  return out;
}

const statusText = (r: ErrorRow): string => (r.status === null ? '—' : [r.status, ...(r.alsoStatus ?? [])].join(', '));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the error table', () => {
  it('is documented in docs/errors.md, row for row, and docs/errors.md lists no other code', () => {
    const docs = documented();
    expect([...docs.keys()].sort()).toEqual([...ERROR_CODES].sort());
    for (const [code, row] of rows)
      expect({ code, status: docs.get(code)?.status, surfaces: docs.get(code)?.surfaces }).toEqual({
        code,
        status: statusText(row),
        surfaces: row.surface.join(', '),
      });
  });

  it('names a page for each code that explains it', () => {
    const missing = rows.filter(([code, row]) => !readFileSync(join(root, row.doc), 'utf8').includes(code));
    expect(missing.map(([code, row]) => `${code} not in ${row.doc}`)).toEqual([]);
  });

  it('has each code raised somewhere in src/', () => {
    const text = sources(join(root, 'src'))
      .filter((f) => !f.endsWith('core/error-codes.ts'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const unused = ERROR_CODES.filter((c) => !text.includes(`ErrorCodes.${c}`) && !text.includes(`'${c}'`));
    expect(unused).toEqual([]);
  });

  it('gives an HTTP status to every REST and login code, and an RFC 6749 error to exactly the login codes', () => {
    for (const [code, row] of rows) {
      const http = row.surface.includes('rest') || row.surface.includes('login');
      expect({ code, hasStatus: row.status !== null }).toEqual({ code, hasStatus: http });
      expect({ code, oauth: row.oauth !== undefined }).toEqual({ code, oauth: row.surface.includes('login') });
    }
  });

  it('makes one error class carry any code, its status from the table and only a listed other status', () => {
    const e = new AppError('CLIENT_CREATE_FAILED', undefined, { status: 400 });
    expect([e.status, e.message, e.code]).toEqual([400, 'creating the client failed', 'CLIENT_CREATE_FAILED']);
    expect(new AppError('NOT_FOUND', 'x').status).toBe(404);
    expect(() => new AppError('NOT_FOUND', 'x', { status: 500 })).toThrow(/never answered with HTTP 500/);
    const w = new AppError('WEBHOOK_BAD_URL', 'not a URL', { path: 'input[0].url' });
    expect([w.message, w.path, isErrorOf(w, 'webhook'), isErrorOf(w, 'tool')]).toEqual([
      'input[0].url: not a URL',
      'input[0].url',
      true,
      false,
    ]);
  });
});
