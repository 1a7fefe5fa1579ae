/**
 * `${var}` substitution in strings of repeated items. An expression is a variable, optionally
 * combined with one integer (`${i+1}`, `${i*4}`, `${k-1}`, `${i/2}`, `${i%3}`), optionally
 * zero-padded (`${i+1:03}` → `007`). A string that is exactly one unpadded expression
 * becomes a number, so `level: ${i}` is a number.
 */
export type Vars = ReadonlyMap<string, number>;

const EXPR_RE = /\$\{([^}]*)\}/g;
const TERM_RE = /^\s*([A-Za-z_]\w*)\s*(?:([-+*/%])\s*(\d+))?\s*(?::\s*(\d+))?\s*$/;

export type SubstResult = { ok: true; value: string | number } | { ok: false; message: string };

export function hasExpression(text: string): boolean {
  return text.includes('${');
}

export function substitute(text: string, vars: Vars): SubstResult {
  if (!hasExpression(text)) return { ok: true, value: text };
  let error: string | null = null;
  let numeric: number | null = null;
  const out = text.replace(EXPR_RE, (whole, expr: string) => {
    const r = evaluate(expr, vars);
    if (typeof r === 'string') {
      error ??= `${r} in \`${whole}\``;
      return whole;
    }
    if (whole === text && r.pad === null) numeric = r.value;
    return r.pad === null ? String(r.value) : String(r.value).padStart(r.pad, '0');
  });
  if (error !== null) return { ok: false, message: error };
  return { ok: true, value: numeric ?? out };
}

function evaluate(expr: string, vars: Vars): { value: number; pad: number | null } | string {
  const m = TERM_RE.exec(expr);
  if (!m) return 'bad expression (expected `${name}`, `${name+1}`, `${name*4}`, optionally `:03` padding)';
  const [, name = '', op, num, pad] = m;
  const base = vars.get(name);
  if (base === undefined) {
    const known = [...vars.keys()];
    return `unknown variable \`${name}\` (${known.length === 0 ? 'no repeat here defines one' : `defined here: ${known.join(', ')}`})`;
  }
  const n = Number(num ?? 0);
  if ((op === '/' || op === '%') && n === 0) return 'division by zero';
  const value = op === undefined ? base : applyOp(base, op, n);
  return { value, pad: pad === undefined ? null : Number(pad) };
}

function applyOp(a: number, op: string, b: number): number {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return Math.floor(a / b);
    default:
      return a % b;
  }
}
