import type { Finding, Seg } from './diagnostics.js';
import { didYouMean } from './diagnostics.js';
import { substitute, type Vars } from './substitute.js';

/**
 * Template and repetition expansion: turns the file's document into the expanded tree that
 * the schema validates. Every container in the output remembers where in the file it came
 * from (`Origin`), so a problem found on copy 731 of a repeated sensor still names the line
 * of the repeated item, and a field supplied by a template names the line of its `use:`.
 */
export interface Origin {
  /** Path of the file node this container was copied from (or of the `use:` value). */
  docPath: readonly Seg[];
  /** False for containers supplied by a template: their own sub-paths are not in the file. */
  exact: boolean;
  /** Path of the item's `use:` value, for fields of a merged item missing from the file. */
  usePath: readonly Seg[] | null;
}

export interface Expansion {
  tree: unknown;
  origins: WeakMap<object, Origin>;
  findings: Finding[];
  /** True when expansion stopped at MAX_EXPANDED_ITEMS. */
  tooLarge: boolean;
}

/** Lists whose items may carry `use:` and `repeat:`. */
const ITEM_LISTS = new Set([
  'organizations',
  'sites',
  'buildings',
  'floors',
  'rooms',
  'zones',
  'doors',
  'hives',
  'sensors',
  'people',
  'meetings',
  'users',
  'clients',
]);
/** Fields holding one point or a list of points: shifted by a repeat's offset. */
const POINT_FIELDS = new Set(['center', 'position']);
const POINT_LIST_FIELDS = new Set(['polygon', 'outline', 'line']);
/**
 * Guard against a typo like `repeat: 1000000` nested twice exhausting memory. fleet.yaml's
 * layout expands to ~1.1 items a sensor (30,300 sensors: ~35,000 items), so 250,000 items
 * load a fleet of up to ~225,000 sensors (issue 14 runs 100k–150k). Its cost, measured: a
 * 220,000-sensor fleet loads in 13 s to ~270 MB of heap (430 MB peak RSS); a 450 × 450
 * sensor grid (202,500 items, a warning per sensor) in 15 s to 510 MB peak RSS. (At 100,000
 * it had guarded a stack overflow: findings were `push(...)`ed, which overflows past
 * ~120,000 — they are appended in loops now; a 700 × 700 grid then resolves, in 60 s and
 * 1.1 GB, which the bound still refuses.) A 499 × 500 grid, just under the bound: 12.4 s of
 * CPU and 714 MB before its items shared their paths and origins (`child`, `origin`), 7.5 s and
 * 442 MB after (`test/scenario/grid-cost.test.ts`; Node's own start-up included).
 */
export const MAX_EXPANDED_ITEMS = 250_000;

interface Ctx {
  vars: Vars;
  offset: readonly [number, number];
  /** Set inside template content: every container gets this origin. */
  via: Origin | null;
  /** Templates being expanded (cycle detection). */
  stack: readonly string[];
}

type Obj = Record<string, unknown>;
/** The fields of a merged item that came from a template, and where to report them. */
interface Tpl {
  keys: ReadonlySet<string>;
  via: Origin;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function expandScenario(doc: unknown): Expansion {
  return new Expander(doc).run();
}

class Expander {
  readonly origins = new WeakMap<object, Origin>();
  readonly findings: Finding[] = [];
  readonly templates: Obj;
  readonly usedTemplates = new Set<string>();
  items = 0;
  tooLarge = false;
  /**
   * Child paths and exact origins, one per (parent path, key): a grid's or repeat's items share
   * their item's path, so their fields share paths and origins instead of each copying them
   * (a 499 × 500 sensor grid validated in 27 s to 1.77 GB, issue 33 item 13).
   */
  readonly #children = new WeakMap<readonly Seg[], Map<Seg, readonly Seg[]>>();
  readonly #exact = new WeakMap<readonly Seg[], Origin>();

  constructor(readonly doc: unknown) {
    this.templates = isObj(doc) && isObj(doc['templates']) ? doc['templates'] : {};
  }

  run(): Expansion {
    const ctx: Ctx = { vars: new Map(), offset: [0, 0], via: null, stack: [] };
    let tree: unknown = this.doc;
    if (isObj(this.doc)) {
      const out: Obj = {};
      for (const [k, v] of Object.entries(this.doc)) out[k] = k === 'templates' ? v : this.node(v, [k], ctx, k);
      this.origins.set(out, { docPath: [], exact: true, usePath: null });
      tree = out;
    }
    for (const name of Object.keys(this.templates)) {
      if (!this.usedTemplates.has(name)) this.warn(['templates', name], `template \`${name}\` is never used`);
    }
    return { tree, origins: this.origins, findings: this.findings, tooLarge: this.tooLarge };
  }

  error(docPath: readonly Seg[], message: string): void {
    this.findings.push({ path: docPath, message, severity: 'error', inFile: true });
  }

  warn(docPath: readonly Seg[], message: string): void {
    this.findings.push({ path: docPath, message, severity: 'warning', inFile: true });
  }

  origin(docPath: readonly Seg[], ctx: Ctx, usePath: readonly Seg[] | null = null): Origin {
    if (ctx.via !== null) return ctx.via;
    if (usePath !== null) return { docPath, exact: true, usePath };
    let o = this.#exact.get(docPath);
    if (o === undefined) this.#exact.set(docPath, (o = { docPath, exact: true, usePath: null }));
    return o;
  }

  /** `[...docPath, seg]`, the same array each time for the same parent array and key. */
  child(docPath: readonly Seg[], seg: Seg): readonly Seg[] {
    let byKey = this.#children.get(docPath);
    if (byKey === undefined) this.#children.set(docPath, (byKey = new Map()));
    let path = byKey.get(seg);
    if (path === undefined) byKey.set(seg, (path = [...docPath, seg]));
    return path;
  }

  /** Copies a value, substituting strings, shifting points and expanding item lists. */
  node(v: unknown, docPath: readonly Seg[], ctx: Ctx, key: string | null): unknown {
    if (typeof v === 'string') return this.text(v, docPath, ctx);
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      if (key !== null && ITEM_LISTS.has(key))
        v.forEach((item, i) => this.item(item, this.child(docPath, i), ctx, key, out));
      else if (key !== null && POINT_LIST_FIELDS.has(key))
        v.forEach((p, i) => out.push(this.point(p, this.child(docPath, i), ctx)));
      else if (key !== null && POINT_FIELDS.has(key)) return this.point(v, docPath, ctx);
      else v.forEach((x, i) => out.push(this.node(x, this.child(docPath, i), ctx, null)));
      this.origins.set(out, this.origin(docPath, ctx));
      return out;
    }
    if (isObj(v)) return this.object(v, docPath, ctx);
    return v;
  }

  object(v: Obj, docPath: readonly Seg[], ctx: Ctx, tpl?: Tpl): Obj {
    const out: Obj = {};
    const tctx: Ctx | null = tpl === undefined ? null : { ...ctx, via: ctx.via ?? tpl.via };
    for (const [k, x] of Object.entries(v)) {
      out[k] = this.node(x, this.child(docPath, k), tctx !== null && tpl?.keys.has(k) === true ? tctx : ctx, k);
    }
    this.origins.set(out, this.origin(docPath, ctx, tpl === undefined ? null : [...docPath, 'use']));
    return out;
  }

  text(v: string, docPath: readonly Seg[], ctx: Ctx): string | number {
    const r = substitute(v, ctx.vars);
    if (r.ok) return r.value;
    this.error(ctx.via?.docPath ?? docPath, r.message);
    return v;
  }

  point(p: unknown, docPath: readonly Seg[], ctx: Ctx): unknown {
    const [dx, dy] = ctx.offset;
    if (Array.isArray(p) && p.length === 2 && typeof p[0] === 'number' && typeof p[1] === 'number') {
      return dx === 0 && dy === 0 ? [p[0], p[1]] : [round6(p[0] + dx), round6(p[1] + dy)];
    }
    return this.node(p, docPath, ctx, null);
  }

  /** Expands one list item into zero or more output items: repeat, then use, then grid. */
  item(v: unknown, docPath: readonly Seg[], ctx: Ctx, key: string, out: unknown[], tpl?: Tpl): void {
    if (this.tooLarge) return;
    if (!isObj(v)) {
      out.push(this.node(v, docPath, ctx, null));
      return;
    }
    if (v['repeat'] !== undefined) return this.repeat(v, docPath, ctx, key, out, tpl);
    if (v['use'] !== undefined) return this.use(v, docPath, ctx, key, out, tpl);
    if (key === 'sensors' && v['grid'] !== undefined) return this.grid(v, docPath, ctx, out, tpl);
    if (++this.items > MAX_EXPANDED_ITEMS) {
      this.tooLarge = true;
      this.error(docPath, `expansion produces more than ${MAX_EXPANDED_ITEMS} items; check the repeat counts`);
      return;
    }
    out.push(this.object(v, docPath, ctx, tpl));
  }

  refuseTooLarge(at: readonly Seg[], what: string): void {
    this.tooLarge = true;
    this.error(at, `${what} exceeds the limit of ${MAX_EXPANDED_ITEMS} items (with what is already expanded)`);
  }

  /** Where a problem with this item's own expansion keys is reported. */
  at(docPath: readonly Seg[], ctx: Ctx, tpl: Tpl | undefined, field: string): readonly Seg[] {
    return ctx.via?.docPath ?? (tpl?.keys.has(field) === true ? tpl.via.docPath : [...docPath, field]);
  }

  repeat(v: Obj, docPath: readonly Seg[], ctx: Ctx, key: string, out: unknown[], tpl?: Tpl): void {
    const spec = parseRepeat(v['repeat']);
    if (typeof spec === 'string') return this.error(this.at(docPath, ctx, tpl, 'repeat'), spec);
    // Checked before expanding: a count of 10^9 must not be walked to find it too large.
    if (spec.count > MAX_EXPANDED_ITEMS - this.items)
      return this.refuseTooLarge(this.at(docPath, ctx, tpl, 'repeat'), `repeat of ${spec.count}`);
    const { repeat: _drop, ...rest } = v;
    for (let k = 0; k < spec.count && !this.tooLarge; k++) {
      const vars = new Map(ctx.vars).set(spec.as, k);
      const offset = [ctx.offset[0] + k * spec.offset[0], ctx.offset[1] + k * spec.offset[1]] as const;
      this.item(rest, docPath, { ...ctx, vars, offset }, key, out, tpl);
    }
  }

  use(v: Obj, docPath: readonly Seg[], ctx: Ctx, key: string, out: unknown[], tpl?: Tpl): void {
    const at = this.at(docPath, ctx, tpl, 'use');
    const name = String(this.text(String(v['use']), at, ctx));
    const body = this.templates[name];
    if (!isObj(body))
      return this.error(at, `unknown template \`${name}\`${didYouMean(name, Object.keys(this.templates))}`);
    if (ctx.stack.includes(name)) return this.error(at, `template cycle: ${[...ctx.stack, name].join(' → ')}`);
    this.usedTemplates.add(name);
    const { use: _drop, ...own } = v;
    // Template fields are template content: problems in them are reported at the `use:` line.
    const keys = new Set(Object.keys(body).filter((k) => !(k in own)));
    // A field an outer template supplied stays template content through a nested `use:`.
    if (tpl !== undefined) for (const k of Object.keys(own)) if (tpl.keys.has(k)) keys.add(k);
    const via = tpl?.via ?? ctx.via ?? { docPath: at, exact: false, usePath: null };
    this.item({ ...body, ...own }, docPath, { ...ctx, stack: [...ctx.stack, name] }, key, out, { keys, via });
  }

  grid(v: Obj, docPath: readonly Seg[], ctx: Ctx, out: unknown[], tpl?: Tpl): void {
    const spec = parseGrid(v['grid']);
    if (typeof spec === 'string') return this.error(this.at(docPath, ctx, tpl, 'grid'), spec);
    if (spec.nx * spec.ny > MAX_EXPANDED_ITEMS - this.items)
      return this.refuseTooLarge(this.at(docPath, ctx, tpl, 'grid'), `grid of ${spec.nx} × ${spec.ny} sensors`);
    const { grid: _drop, ...rest } = v;
    const name = String(rest['name'] ?? '');
    const named = name.includes('${gx}') || name.includes('${gy}');
    for (let gy = 0; gy < spec.ny && !this.tooLarge; gy++) {
      for (let gx = 0; gx < spec.nx && !this.tooLarge; gx++) {
        const vars = new Map(ctx.vars).set('gx', gx).set('gy', gy);
        const offset = [ctx.offset[0] + gx * spec.dx, ctx.offset[1] + gy * spec.dy] as const;
        this.item(
          named ? rest : { ...rest, name: `${name}-${gx}-${gy}` },
          docPath,
          { ...ctx, vars, offset },
          'sensors',
          out,
          tpl,
        );
      }
    }
  }
}

function parseRepeat(r: unknown): { count: number; as: string; offset: [number, number] } | string {
  const bad = 'repeat must be a count or { count: N, as: name, offset: [dx, dy] }';
  if (typeof r === 'number')
    return Number.isInteger(r) && r >= 0 ? { count: r, as: 'i', offset: [0, 0] } : `${bad}; got ${r}`;
  if (!isObj(r)) return bad;
  const extra = Object.keys(r).filter((k) => k !== 'count' && k !== 'as' && k !== 'offset');
  if (extra.length > 0)
    return `unknown field \`${extra[0]}\` in repeat${didYouMean(String(extra[0]), ['count', 'as', 'offset'])}`;
  const { count, as = 'i', offset = [0, 0] } = r;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) return 'repeat.count must be an integer ≥ 0';
  if (typeof as !== 'string' || !/^[A-Za-z_]\w*$/.test(as))
    return 'repeat.as must be a variable name like `i` or `floor`';
  if (!isPoint(offset)) return 'repeat.offset must be [dx, dy] in metres';
  return { count, as, offset: [offset[0], offset[1]] };
}

function parseGrid(g: unknown): { nx: number; ny: number; dx: number; dy: number } | string {
  const bad = 'grid must be { count: [nx, ny], step: [dx, dy] } with positive integer counts';
  if (!isObj(g)) return bad;
  const { count, step } = g;
  if (!Array.isArray(count) || count.length !== 2 || !count.every((n) => Number.isInteger(n) && (n as number) > 0))
    return bad;
  if (!isPoint(step)) return bad;
  return { nx: count[0] as number, ny: count[1] as number, dx: step[0], dy: step[1] };
}

function isPoint(p: unknown): p is [number, number] {
  return Array.isArray(p) && p.length === 2 && p.every((n) => typeof n === 'number' && Number.isFinite(n));
}

/** Keeps shifted coordinates free of binary noise like 12.000000000000002. */
function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
