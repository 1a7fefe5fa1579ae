import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node as YamlNode } from 'yaml';
import { formatPath, type Diagnostic, type Finding, type Seg } from './diagnostics.js';
import type { Origin } from './expand.js';

/**
 * Maps findings (paths in the expanded tree) back to file positions: through the origin of
 * the nearest expanded container to a path in the file, then through the YAML document to
 * the node's range, falling back to the nearest parent node that exists in the file.
 */
export interface Source {
  file: string;
  doc: Document | null;
  lines: LineCounter | null;
}

export class Locator {
  constructor(
    readonly source: Source,
    readonly tree: unknown,
    readonly origins: WeakMap<object, Origin>,
  ) {}

  diagnostic(f: Finding): Diagnostic {
    const docPath = f.inFile === true ? f.path : this.docPathOf(f.path);
    const { line, col } = this.position(docPath, f.atKey === true);
    return {
      file: this.source.file,
      line,
      col,
      path: f.inFile === true ? formatPath(f.path) : this.displayPath(f.path),
      message: f.message,
      severity: f.severity,
    };
  }

  /**
   * The path as the file has it (`sensors[4].center`, the fifth YAML item), and where a
   * repeat, grid or template produced the item, the expanded path and name beside it.
   */
  private displayPath(path: readonly Seg[]): string {
    const expanded = formatPath(path);
    // The deepest container that is in the file as such; a template's fields count as written
    // at the item that uses it.
    let node: unknown = this.tree;
    let written: string | null = null;
    for (let depth = 0; typeof node === 'object' && node !== null; depth++) {
      const o = this.origins.get(node);
      if (o?.exact === true) written = formatPath([...o.docPath, ...path.slice(depth)]);
      const seg = path[depth];
      if (seg === undefined) break;
      node = (node as Record<string, unknown>)[seg];
    }
    if (written === null) return expanded;
    if (written === expanded) return expanded;
    const name = this.itemNameAt(path);
    return `${written} (expanded as ${expanded}${name === null ? '' : ` \`${name}\``})`;
  }

  /** The `name` of the deepest named item along `path` in the expanded tree. */
  private itemNameAt(path: readonly Seg[]): string | null {
    let node: unknown = this.tree;
    let name: string | null = null;
    for (const seg of path) {
      if (typeof node !== 'object' || node === null) break;
      node = (node as Record<string, unknown>)[seg];
      const n =
        typeof node === 'object' && node !== null && !Array.isArray(node)
          ? (node as Record<string, unknown>)['name']
          : undefined;
      if (typeof n === 'string' || typeof n === 'number') name = String(n);
    }
    return name;
  }

  /** JSON pointer of the file node an expanded entity came from (its `use:`/`repeat` item). */
  pointerOf(path: readonly Seg[]): string {
    const { origin } = this.originAt(path);
    if (origin === null) return '';
    const p = origin.exact ? origin.docPath : origin.docPath.slice(0, -1);
    return toPointer(p);
  }

  private originAt(path: readonly Seg[]): { origin: Origin | null; suffix: readonly Seg[] } {
    let node: unknown = this.tree;
    let best: { origin: Origin | null; depth: number } = { origin: null, depth: 0 };
    for (let depth = 0; ; depth++) {
      const o = typeof node === 'object' && node !== null ? this.origins.get(node) : undefined;
      if (o !== undefined) best = { origin: o, depth };
      const seg = path[depth];
      if (seg === undefined || typeof node !== 'object' || node === null) break;
      node = (node as Record<string, unknown>)[seg];
    }
    return { origin: best.origin, suffix: path.slice(best.depth) };
  }

  private docPathOf(path: readonly Seg[]): readonly Seg[] {
    const { origin, suffix } = this.originAt(path);
    if (origin === null) return path;
    if (!origin.exact) return origin.docPath;
    const candidate = [...origin.docPath, ...suffix];
    if (origin.usePath !== null && suffix.length > 0 && this.find(candidate).depth <= origin.docPath.length)
      return origin.usePath;
    return candidate;
  }

  private position(docPath: readonly Seg[], atKey: boolean): { line: number; col: number } {
    const { doc, lines } = this.source;
    if (doc === null || lines === null) return { line: 0, col: 0 };
    const { node, key, depth } = this.find(docPath);
    const complete = depth === docPath.length;
    const target = atKey && complete && key !== null ? key : node;
    const offset = target?.range?.[0] ?? 0;
    const pos = lines.linePos(offset);
    return { line: pos.line, col: pos.col };
  }

  /** Deepest node of the file along `docPath`, with its key node when reached through a map. */
  private find(docPath: readonly Seg[]): { node: YamlNode | null; key: YamlNode | null; depth: number } {
    const doc = this.source.doc;
    let node = (doc?.contents ?? null) as YamlNode | null;
    let key: YamlNode | null = null;
    let depth = 0;
    for (const seg of docPath) {
      if (node !== null && isAlias(node) && doc !== null) node = (node.resolve(doc) ?? null) as YamlNode | null;
      let next: YamlNode | null = null;
      let nextKey: YamlNode | null = null;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && String(isScalar(p.key) ? p.key.value : p.key) === String(seg));
        if (pair !== undefined) {
          nextKey = pair.key as YamlNode | null;
          // A key with no value (`polygon:`) has no value node: report at the key.
          next = (pair.value as YamlNode | null) ?? nextKey;
        }
      } else if (isSeq(node) && typeof seg === 'number') {
        next = (node.items[seg] as YamlNode | undefined) ?? null;
      }
      if (next === null) break;
      node = next;
      key = nextKey;
      depth++;
    }
    return { node, key, depth };
  }
}

export function toPointer(path: readonly Seg[]): string {
  return path.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
